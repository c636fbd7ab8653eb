// The match the hub runs when a request is created (and the extension's dry run over the person's history): a request's
// subject, the paths it names resolved, and the person's rules applied, deny first. Pure: the real paths come in.
import type { ConfirmAsk } from './ask-input.js';
import type { PermissionRequest } from './permission.js';
import { globMatches, type Rule } from './rules.js';
import { analyseCommand, mayRun, type LiteralCommand, type ShellAnalysis } from './shell-command.js';

/** What a rule is matched against, derived from a request (`ruleSubject`). */
export interface RuleSubject {
  tool: string;
  command: string | null;
  /** The command as a tree; null when there is no command. */
  shell: ShellAnalysis | null;
  /** What `pattern` is matched against when there is no command. */
  text: string;
  agent: string | null;
  directory: string | null;
  /** Paths the request names: an edit's file, every path-like field of another tool's input. */
  paths: string[];
  sessionId: string | null;
}

/**
 * How paths are resolved: the home directory for `~` (null: a `~` path cannot be resolved), and, in the hub, the real
 * path with symbolic links followed where they exist. Without `real`, `.` and `..` are taken as text.
 */
export interface PathContext {
  home: string | null;
  real?: (absolute: string) => string | null;
}

const NO_PATHS: PathContext = { home: null };

/** Keys of a tool's input whose string values are paths. */
const PATH_KEY = /(path|file|dir|directory|folder|cwd|root|target|dest|destination|source|src|output|out|location)s?$/i;
const PATH_VALUE = /^(\/|~|\.\.?(\/|$))/;

/** Every string in a tool's input that names a path (by its key or its form), at most 200, 6 levels deep. */
export function inputPaths(input: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown, key: string, depth: number) => {
    if (out.length >= 200 || depth > 6) return;
    if (typeof value === 'string') {
      if (value !== '' && (PATH_KEY.test(key) || PATH_VALUE.test(value))) out.push(value);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, key, depth + 1);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1);
    }
  };
  walk(input, '', 0);
  return out;
}

/** The subject of a permission request or a confirm ask; other kinds have no rules (there is no answer to repeat). */
export function ruleSubject(request: PermissionRequest | ConfirmAsk, agent: string | null): RuleSubject {
  if (request.kind === 'confirm') {
    return { tool: 'elicit_confirm', command: null, shell: null, text: request.message, agent, directory: null, paths: [], sessionId: null };
  }
  const command = request.command ?? null;
  const paths = [...(request.path ? [request.path] : []), ...(command === null ? inputPaths(request.input) : [])];
  return {
    tool: request.tool,
    command,
    shell: command === null ? null : analyseCommand(command),
    text: command ?? request.path ?? JSON.stringify(request.input),
    agent: request.host,
    directory: request.cwd || null,
    paths: [...new Set(paths)],
    sessionId: request.sessionId || null,
  };
}

const words = (s: string) => s.trim().split(/\s+/);

/** `have` is `want` followed by nothing or by more words. */
function startsWithWords(have: readonly string[], want: readonly string[]): boolean {
  return want.length <= have.length && want.every((w, i) => have[i] === w);
}

/** An absolute path with its `.` and `..` steps taken (as text: links are not followed). */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** `path` is `dir` or inside it (both absolute and normalized; a `..` left in either is never inside). */
export function isUnder(path: string, dir: string): boolean {
  const base = dir.replace(/\/+$/, '');
  if (path.split('/').includes('..') || base.split('/').includes('..')) return false;
  return path === base || path.startsWith(`${base}/`) || base === '';
}

/**
 * A path as the program would see it, absolute with links followed where the context can: `~` and `~/x` from home,
 * a relative one from `cwd`. Null when it cannot be known (`~user`, no home, no working directory).
 */
export function resolvePath(path: string, cwd: string | null, ctx: PathContext): string | null {
  let absolute: string;
  if (path === '~' || path.startsWith('~/')) {
    if (ctx.home === null) return null;
    absolute = `${ctx.home}/${path.slice(1)}`;
  } else if (path.startsWith('~')) {
    return null;
  } else if (path.startsWith('/')) {
    absolute = path;
  } else {
    if (cwd === null) return null;
    absolute = `${cwd}/${path}`;
  }
  return ctx.real ? ctx.real(absolute) : normalizePath(absolute);
}

const URL_WORD = /^(https?|wss?|git|ssh|s3|gs):\/\//i;

/**
 * The paths a command's argument may name: the word, what follows `=`, `:` or `,` in it (`--out=../x`, `a:b`), and
 * an option's attached value (`-o../x`). Taking too many only makes an allow stricter: a word that is no path resolves
 * inside the working directory.
 */
export function argumentPaths(word: string): string[] {
  if (URL_WORD.test(word)) return [];
  const out = [word];
  for (let i = 0; i < word.length; i++) if ('=:,'.includes(word[i] ?? '') && i + 1 < word.length) out.push(word.slice(i + 1));
  const option = /^-{1,2}[A-Za-z0-9_-]*?(?=[./~]|$)/.exec(word);
  if (word.startsWith('-') && option && option[0].length < word.length) out.push(word.slice(option[0].length));
  return out.filter((p) => p !== '' && !p.startsWith('-'));
}

/** Where a `cd` could take the shell; null when it cannot be told (no argument, `-`, popd, a CDPATH lookup). */
function cdTargets(argv: readonly string[], from: readonly string[], ctx: PathContext): string[] | null {
  const args = argv.slice(1).filter((w) => !/^-[LPe@]+$/.test(w));
  const program = argv[0];
  // The directory before this command (OLDPWD, the stack) is not known here.
  if (program === 'popd' || args[0] === '-') return null;
  const [target] = args;
  if (target === undefined || args.length > 1) return null;
  // A bare name is looked up in CDPATH first.
  if (!target.startsWith('/') && !target.startsWith('./') && !target.startsWith('../') && target !== '.' && target !== '..' && !target.startsWith('~')) return null;
  const out: string[] = [];
  for (const cwd of from) {
    const to = resolvePath(target, cwd, ctx);
    if (to === null) return null;
    out.push(to);
  }
  return out;
}

/** The context with each real path looked up once per request: the same directory is met for every rule. */
function remembering(ctx: PathContext): PathContext {
  const { real } = ctx;
  if (!real) return ctx;
  const seen = new Map<string, string | null>();
  return {
    home: ctx.home,
    real: (absolute) => {
      let at = seen.get(absolute);
      if (at === undefined) {
        at = real(absolute);
        seen.set(absolute, at);
      }
      return at;
    },
  };
}

interface Scope {
  rule: Rule;
  /** The rule's directory, resolved; null when the rule has none. */
  dir: string | null;
}

function resolvedDir(rule: Rule, ctx: PathContext): string | null | undefined {
  if (rule.match.directory === undefined) return null;
  const dir = resolvePath(rule.match.directory, null, ctx);
  return dir ?? undefined;
}

/** A shell command's argument paths, each resolved from every place the shell may be: all inside `dir`. */
function pathsInside(argv: readonly string[], cwds: readonly string[] | null, dir: string, ctx: PathContext): boolean {
  if (cwds === null || cwds.length === 0) return false;
  for (const cwd of cwds) {
    if (!isUnder(cwd, dir)) return false;
    for (const word of argv.slice(1)) {
      for (const p of argumentPaths(word)) {
        const at = resolvePath(p, cwd, ctx);
        if (at === null || !isUnder(at, dir)) return false;
      }
    }
  }
  return true;
}

/** The conditions every rule has beside its subject: alive, the tool, the agent, the session. */
function applies(rule: Rule, subject: RuleSubject, now: number): boolean {
  if (rule.expiresAt !== null && now >= rule.expiresAt) return false;
  const m = rule.match;
  if (m.tool !== subject.tool) return false;
  if (m.agent !== undefined && m.agent !== subject.agent) return false;
  if (m.sessionId !== undefined && m.sessionId !== subject.sessionId) return false;
  return true;
}

/** A deny: the program runs anywhere in the command, the pattern fits it or a program run, any path is inside. */
function denyMatches(rule: Rule, subject: RuleSubject, ctx: PathContext): boolean {
  const m = rule.match;
  const shell = subject.shell;
  if (m.commandPrefix !== undefined && (shell === null || !mayRun(shell, words(m.commandPrefix)))) return false;
  if (m.pattern !== undefined) {
    const pattern = m.pattern;
    const fits = globMatches(pattern, subject.text) || (shell !== null && shell.runs.some((run) => globMatches(pattern, run.join(' '))));
    if (!fits) return false;
  }
  if (m.directory !== undefined) {
    const dir = resolvePath(m.directory, null, ctx) ?? normalizePath(m.directory);
    const candidates = [...subject.paths, ...(shell?.runs.flatMap((run) => run.slice(1).flatMap(argumentPaths)) ?? [])];
    const inside = (p: string) => {
      const at = resolvePath(p, subject.directory, ctx);
      return at !== null && isUnder(at, dir);
    };
    if (!(subject.directory !== null && inside(subject.directory)) && !candidates.some(inside)) return false;
  }
  return true;
}

/** An allow for a request with no command: the pattern over the whole subject, and every path inside its directory. */
function allowMatches(scope: Scope, subject: RuleSubject, ctx: PathContext): boolean {
  const m = scope.rule.match;
  if (m.commandPrefix !== undefined) return false;
  if (m.pattern !== undefined && !globMatches(m.pattern, subject.text)) return false;
  if (m.directory !== undefined) {
    if (scope.dir === null || subject.directory === null) return false;
    const cwd = resolvePath(subject.directory, null, ctx);
    if (cwd === null || !isUnder(cwd, scope.dir)) return false;
    for (const p of subject.paths) {
      const at = resolvePath(p, cwd, ctx);
      if (at === null || !isUnder(at, scope.dir)) return false;
    }
  }
  return true;
}

/** An allow covering one simple command of a shell command: its words, and its paths from every possible place. */
function covers(scope: Scope, command: LiteralCommand, cwds: readonly string[] | null, ctx: PathContext): boolean {
  const m = scope.rule.match;
  if (m.commandPrefix !== undefined && !startsWithWords(command.argv, words(m.commandPrefix))) return false;
  if (m.pattern !== undefined && !globMatches(m.pattern, command.argv.join(' '))) return false;
  if (m.directory !== undefined) return scope.dir !== null && pathsInside(command.argv, cwds, scope.dir, ctx);
  return true;
}

/** What decided a request: the rule named in its record, and every rule that took part (an allow may need several). */
export interface RuleVerdict {
  rule: Rule;
  used: Rule[];
}

/**
 * The person's rules applied to a request: any matching deny first (a floor: the denied program anywhere in the
 * command), then allows. A shell command is allowed only when the parser understood all of it, every word is literal,
 * and each simple command is covered by an allow (the same rule or several). Null: the person decides.
 */
export function ruleVerdict(rules: readonly Rule[], subject: RuleSubject, now: number, paths: PathContext = NO_PATHS): RuleVerdict | null {
  const live = rules.filter((r) => applies(r, subject, now));
  if (live.length === 0) return null;
  const ctx = remembering(paths);
  for (const rule of live) if (rule.effect === 'deny' && denyMatches(rule, subject, ctx)) return { rule, used: [rule] };
  const allows: Scope[] = [];
  for (const rule of live) {
    if (rule.effect !== 'allow') continue;
    const dir = resolvedDir(rule, ctx);
    // A directory that cannot be resolved scopes nothing.
    if (dir !== undefined) allows.push({ rule, dir });
  }
  if (allows.length === 0) return null;
  if (subject.shell === null) {
    const scope = allows.find((s) => allowMatches(s, subject, ctx));
    return scope ? { rule: scope.rule, used: [scope.rule] } : null;
  }
  const understood = subject.shell.allowable;
  if (!understood.ok) return null;
  const start = subject.directory === null ? null : resolvePath(subject.directory, null, ctx);
  // Every place the shell may be in so far (null: one that cannot be told), and where the last command left it.
  let anywhere: string[] | null = start === null ? null : [start];
  let left: string[] | null = anywhere;
  const used: Rule[] = [];
  for (const command of understood.commands) {
    const cwds = command.afterSuccessOfPrevious ? left : anywhere;
    let by: Scope | undefined;
    if (command.changesDirectory) {
      const to = cwds === null ? null : cdTargets(command.argv, cwds, ctx);
      // Moving only inside a directory an allow is scoped to is covered by that allow.
      by = to === null ? undefined : allows.find((s) => s.dir !== null && to.every((d) => isUnder(d, s.dir ?? '')) && (cwds ?? []).every((d) => isUnder(d, s.dir ?? '')));
      by ??= allows.find((s) => s.dir === null && covers(s, command, cwds, ctx));
      left = to;
      anywhere = to === null || anywhere === null ? null : [...new Set([...anywhere, ...to])];
      if (anywhere !== null && anywhere.length > 16) anywhere = null;
    } else {
      by = allows.find((s) => covers(s, command, cwds, ctx));
      left = cwds;
    }
    if (!by) return null;
    if (!used.includes(by.rule)) used.push(by.rule);
  }
  const [rule] = used;
  return rule ? { rule, used } : null;
}

/** The rule that decides a request (`ruleVerdict`), or null when the person must. */
export function decidingRule(rules: readonly Rule[], subject: RuleSubject, now: number, ctx: PathContext = NO_PATHS): Rule | null {
  return ruleVerdict(rules, subject, now, ctx)?.rule ?? null;
}

