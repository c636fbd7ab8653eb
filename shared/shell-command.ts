// A shell command as a tree, for the person's rules: what an allow rule may cover (only what is understood, word for
// word) and what a deny rule must see (every program run anywhere). Parsed with unbash, a maintained bash parser in
// plain JavaScript (sync, no WASM, no native build): docs/security.md has the measured choice. Agents' hosts run commands
// in the person's shell (zsh on macOS, sometimes fish), which bash does not describe; so an allow accepts only words
// that mean the same in bash, zsh and fish, and a deny also scans the raw text of anything that is not such a word.
import { forEachChild, parse, type ParsedScript, type Redirection, type SyntaxNode, type Word } from 'unbash';

/** One simple command an allow rule may cover: its words exactly as the shell passes them, wrappers removed. */
export interface LiteralCommand {
  /** The program and its arguments, `timeout 60` / `nice` / `command` taken off. */
  argv: string[];
  /** `cd` / `pushd` / `popd`: it only moves the working directory (an allow with a directory covers it when inside). */
  changesDirectory: boolean;
  /**
   * It runs only once the simple command before it has succeeded (`a && b`, every operator before it in the list `&&`):
   * it starts where that one left the shell.
   */
  afterSuccessOfPrevious: boolean;
}

export type NotAllowableReason = 'unparsed' | 'not_literal' | 'opaque' | 'redirection' | 'compound' | 'assignment' | 'empty' | 'too_long';

export type Allowable = { ok: true; commands: LiteralCommand[] } | { ok: false; reason: NotAllowableReason; detail: string };

export interface ShellAnalysis {
  /** The simple commands, in order, when every part of the command is understood and literal; otherwise why not. */
  allowable: Allowable;
  /** Each program run anywhere in the tree, as `[program base name, ...arguments]`, wrappers removed. */
  runs: string[][];
  /**
   * Words from text the parser did not fully understand (a syntax error, a glob, an expansion, a zsh form): a deny
   * rule's program found among them denies, since it may run.
   */
  loose: string[];
}

/** Longer commands are not analysed: never allowed by a rule, denied when they name a denied program. */
export const MAX_COMMAND_LENGTH = 16_384;
const MAX_DEPTH = 4;

/**
 * Characters an unquoted word may hold to mean itself in bash, zsh and fish: no glob (`*?[`), brace, tilde,
 * expansion, history (`!`), zsh qualifier or extended glob (`(#^`), escape, or quote.
 */
const SAFE_UNQUOTED = /^[A-Za-z0-9_@%+,.:/=-]*$/;

/** The program's base name: `/bin/rm` and `./rm` run `rm`. */
export function programName(word: string): string {
  // zsh's `=rm` is rm's path.
  const path = word.startsWith('=') ? word.slice(1) : word;
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base === '' ? path : base;
}

interface WrapperSpec {
  /** Options that take the next word as their value. */
  withValue: readonly string[];
  /** Options that stand alone. */
  flags: readonly string[];
  /** `NAME=value` words before the command (env, sudo). */
  assignments?: boolean;
  /** Words before the command that are not options (timeout's duration, chroot's directory). */
  positional?: number;
  /** `-10` (nice's old form). */
  numericFlag?: boolean;
  /** An allow may look through it: it runs the command as the person would, with no other privilege or environment. */
  transparent: boolean;
  /** Options after which the wrapper runs a string as a command (env -S). */
  stringCommand?: readonly string[];
  /** Options with which it only looks the command up (`command -v`): nothing runs. */
  lookup?: readonly string[];
}

/** Programs that run the rest of their words as a command. */
const WRAPPERS: Record<string, WrapperSpec> = {
  command: { withValue: [], flags: ['-p'], lookup: ['-v', '-V'], transparent: true },
  builtin: { withValue: [], flags: [], transparent: true },
  exec: { withValue: ['-a'], flags: ['-c', '-l'], transparent: false },
  nohup: { withValue: [], flags: [], transparent: true },
  time: { withValue: ['-f', '-o', '--format', '--output'], flags: ['-p', '-a', '-v', '--append', '--verbose', '--portability'], transparent: true },
  nice: { withValue: ['-n', '--adjustment'], flags: [], numericFlag: true, transparent: true },
  timeout: { withValue: ['-s', '-k', '--signal', '--kill-after'], flags: ['-v', '-f', '-p', '--preserve-status', '--foreground', '--verbose'], positional: 1, transparent: true },
  env: { withValue: ['-u', '-C', '--unset', '--chdir'], flags: ['-i', '-0', '-v', '--ignore-environment', '--null', '--debug'], assignments: true, transparent: false, stringCommand: ['-S', '--split-string'] },
  sudo: { withValue: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '--user', '--group', '--host', '--prompt', '--chdir', '--role', '--type', '--close-from', '--command-timeout', '--other-user'], flags: ['-A', '-b', '-E', '-H', '-k', '-K', '-n', '-P', '-S', '-i', '-s', '-B', '-N', '--preserve-env', '--login', '--shell', '--non-interactive', '--stdin', '--background', '--askpass', '--set-home', '--reset-timestamp'], assignments: true, transparent: false },
  doas: { withValue: ['-u', '-C'], flags: ['-n', '-s', '-L'], transparent: false },
  runuser: { withValue: ['-u', '-g', '-G', '--user', '--group', '--supp-group'], flags: ['-l', '-m', '-p', '--login', '--preserve-environment'], transparent: false },
  busybox: { withValue: [], flags: [], transparent: false },
  stdbuf: { withValue: ['-i', '-o', '-e', '--input', '--output', '--error'], flags: [], transparent: false },
  setsid: { withValue: [], flags: ['-c', '-f', '-w', '--ctty', '--fork', '--wait'], transparent: false },
  ionice: { withValue: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'], flags: ['-t', '--ignore'], transparent: false },
  chrt: { withValue: ['-T', '-P', '-D'], flags: ['-a', '-b', '-d', '-f', '-i', '-o', '-r', '-R', '-m', '-p', '-v', '--all-tasks', '--batch', '--deadline', '--fifo', '--idle', '--other', '--rr', '--reset-on-fork', '--verbose'], positional: 1, transparent: false },
  chroot: { withValue: ['--userspec', '--groups'], flags: ['--skip-chdir'], positional: 1, transparent: false },
  unbuffer: { withValue: [], flags: ['-p'], transparent: false },
  caffeinate: { withValue: ['-t', '-w'], flags: ['-d', '-i', '-m', '-s', '-u'], transparent: false },
  strace: { withValue: ['-e', '-o', '-p', '-s', '-u', '-E'], flags: ['-f', '-ff', '-c', '-C', '-q', '-qq', '-t', '-tt', '-ttt', '-T', '-v', '-x', '-xx', '-y', '-yy'], transparent: false },
  ltrace: { withValue: ['-e', '-o', '-p', '-s', '-u'], flags: ['-f', '-c', '-C', '-i', '-S', '-t', '-tt', '-ttt', '-T'], transparent: false },
  // zsh's precommand modifiers and fish's keywords, which bash reads as plain programs.
  noglob: { withValue: [], flags: [], transparent: false },
  nocorrect: { withValue: [], flags: [], transparent: false },
  '-': { withValue: [], flags: [], transparent: false },
  repeat: { withValue: [], flags: [], positional: 1, transparent: false },
  and: { withValue: [], flags: [], transparent: false },
  or: { withValue: [], flags: [], transparent: false },
  not: { withValue: [], flags: [], transparent: false },
  begin: { withValue: [], flags: [], transparent: false },
};

/** Shells: they run what they read (a `-c` string, a script, standard input). */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'rbash', 'pwsh', 'nu', 'elvish', 'xonsh', 'yash', 'posh']);

/** A `-c` option, alone or in a cluster (`-lc`, `-ec`), or `--command`. */
const COMMAND_FLAG = /^(-[a-zA-Z]*c[a-zA-Z]*|--command)$/;

/** Programs that run a command they are given as words or text: never covered by an allow rule. */
const OPAQUE = new Set(['eval', 'source', '.', 'xargs', 'parallel', 'watch', 'su', 'script', 'flock', 'trap', 'alias', 'function', 'fc', 'coproc', 'ssh', 'exec', 'hash', 'enable', 'command_not_found_handle']);

/** Interpreters and the options that take code inline. */
const INLINE_CODE: Record<string, RegExp> = {
  python: /^-[a-zA-Z]*c/, python3: /^-[a-zA-Z]*c/, python2: /^-[a-zA-Z]*c/, pypy: /^-[a-zA-Z]*c/, pypy3: /^-[a-zA-Z]*c/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/, bun: /^(-e|--eval|-p|--print)$/, deno: /^(eval)$/,
  perl: /^-[a-zA-Z]*[eE]/, ruby: /^-[a-zA-Z]*e/, php: /^-[a-zA-Z]*r/, lua: /^-e$/, osascript: /^-e$/, Rscript: /^-e$/, tclsh: /^-/,
};

/** Options of ordinary tools that run a command (`rg --pre`, `tar --to-command`, `sort --compress-program`, …). */
const EXEC_OPTION = /^--(pre|to-command|checkpoint-action|compress-program|use-compress-program|rsh-command|rsh|info-script|new-volume-script|exec|exec-batch|run|command|shell|pager|editor|filter|external-diff|extcmd|upload-pack|receive-pack|ssh)(=|$)/;

/** git's ways to run a command: a config value, an alias, a hook-like subcommand. */
function gitRuns(argv: readonly string[]): boolean {
  if (argv.some((w, i) => i > 0 && (w === '-c' || w.startsWith('--config-env') || w.startsWith('--exec-path') || w === '-x'))) return true;
  const sub = argv.slice(1).find((w) => !w.startsWith('-'));
  return sub === 'submodule' && argv.includes('foreach') || sub === 'bisect' && argv.includes('run') || sub === 'filter-branch' || sub === 'config' || sub === 'difftool' || sub === 'mergetool';
}

/** awk's `system(…)`, `| "cmd"`, `cmd | getline`; sed's `e` command or flag: programs in a script argument. */
const AWK_RUNS = /system\s*\(|\|\s*"|"\s*\||\|&|getline/;
const SED_RUNS = /(^|[\s;{}0-9$/!])e(\s|$|;|})|\/[gpIiMmw0-9]*e[gpIiMmw0-9]*\s*($|;|})/;

/** Why an allow cannot look through this wrapped or opaque command, or null when it can (the command as words). */
function opaqueReason(argv: readonly string[]): string | null {
  const name = programName(argv[0] ?? '');
  const args = argv.slice(1);
  const inline = INLINE_CODE[name];
  if (SHELLS.has(name)) return `${name} runs what it reads`;
  if ((name === 'find' || name === 'fd') && args.some((w) => /^-(exec|execdir|ok|okdir|x|X|-exec|-exec-batch|delete|fprint|fprintf|fls)$/.test(w))) return `${name} runs, deletes or writes by its own options`;
  if (name === 'git' && gitRuns(argv)) return 'git can run a command from its options, config or aliases';
  if (inline && args.some((w) => inline.test(w))) return `${name} runs code given inline`;
  if ((name === 'awk' || name === 'gawk' || name === 'mawk' || name === 'nawk') && args.some((w) => AWK_RUNS.test(w))) return `${name}'s program runs commands`;
  if ((name === 'sed' || name === 'gsed') && args.some((w) => !w.startsWith('-') && SED_RUNS.test(w))) return `${name}'s e runs commands`;
  if (args.some((w) => EXEC_OPTION.test(w))) return `${name} runs a command named in an option`;
  if (OPAQUE.has(name)) return `${name} runs what it is given`;
  return null;
}

interface Unwrapped {
  argv: string[];
  /** Every wrapper taken off could be looked through by an allow. */
  transparent: boolean;
  /** An option the table does not know: the words after it may be the command. */
  uncertain: boolean;
  /** Text a wrapper runs as a command (env -S). */
  strings: string[];
}

/** The command inside its wrappers (`sudo -u x nice -n 5 rm` → `rm`), at most 8 deep. */
export function unwrap(words: readonly string[]): Unwrapped {
  let argv = [...words];
  let transparent = true;
  let uncertain = false;
  const strings: string[] = [];
  for (let depth = 0; depth < 8; depth++) {
    const spec = WRAPPERS[programName(argv[0] ?? '')];
    if (!spec || argv.length < 2) break;
    if (!spec.transparent) transparent = false;
    let i = 1;
    for (; i < argv.length; i++) {
      const w = argv[i] ?? '';
      if (w === '--') {
        i++;
        break;
      }
      if (!w.startsWith('-') || w === '-') break;
      const name = w.includes('=') ? w.slice(0, w.indexOf('=')) : w;
      if (spec.lookup?.includes(w)) return { argv: [], transparent: false, uncertain, strings };
      if (spec.stringCommand?.includes(name)) {
        transparent = false;
        const value = w.includes('=') ? w.slice(w.indexOf('=') + 1) : argv[++i];
        if (value !== undefined) strings.push(value);
      } else if (spec.withValue.includes(name)) {
        if (!w.includes('=')) i++;
      } else if (spec.flags.includes(w) || (spec.numericFlag && /^-\d+$/.test(w))) {
        // a flag
      } else if (spec.withValue.some((o) => o.length === 2 && w.startsWith(o))) {
        // `-n5`, `-uroot`: the value joined to its option
      } else {
        uncertain = true;
        transparent = false;
      }
    }
    if (spec.assignments) while (i < argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i] ?? '')) {
      transparent = false;
      i++;
    }
    i += spec.positional ?? 0;
    argv = argv.slice(i);
    if (argv.length === 0) break;
  }
  return { argv, transparent, uncertain, strings };
}

/** A word exactly as the shell passes it, when it means the same in bash, zsh and fish; null otherwise. */
export function literalWord(word: Word): string | null {
  // zsh expands a leading `=` (`=rm` is rm's path).
  if (word.text.startsWith('=')) return null;
  if (!word.parts) return SAFE_UNQUOTED.test(word.text) ? word.text : null;
  let value = '';
  for (const part of word.parts) {
    if (part.type === 'Literal') {
      if (!SAFE_UNQUOTED.test(part.text)) return null;
      value += part.text;
    } else if (part.type === 'SingleQuoted') {
      // fish reads \' and \\ inside single quotes.
      if (part.value.includes('\\')) return null;
      value += part.value;
    } else if (part.type === 'DoubleQuoted') {
      if (/[$`\\!]/.test(part.text.slice(1, -1)) || !part.parts.every((p) => p.type === 'Literal')) return null;
      value += part.parts.map((p) => (p.type === 'Literal' ? p.value : '')).join('');
    } else {
      return null;
    }
  }
  return value;
}

/** Redirections an allow accepts: a descriptor copied (`2>&1`) or output thrown away (`>/dev/null`); nothing that reads or writes a file. */
function harmlessRedirection(r: Redirection): boolean {
  if (r.type !== 'Redirect' || !r.target) return false;
  if (r.descriptor && r.descriptor.type !== 'FileDescriptor') return false;
  const target = literalWord(r.target);
  if ((r.operator === '>&' || r.operator === '<&') && target !== null && /^(\d|-)$/.test(target)) return true;
  return (r.operator === '>' || r.operator === '>>' || r.operator === '&>' || r.operator === '&>>') && target === '/dev/null';
}

type Refusal = { ok: false; reason: NotAllowableReason; detail: string };
const refuse = (reason: NotAllowableReason, detail: string): Refusal => ({ ok: false, reason, detail });

/** The command's simple commands when its shape is only lists, pipelines and simple commands of literal words. */
function literalCommands(script: ParsedScript, source: string): Allowable {
  const out: LiteralCommand[] = [];
  let chained = false;
  const simple = (node: SyntaxNode): Refusal | null => {
    if (node.type === 'AndOr') {
      let all = true;
      for (const [i, c] of node.commands.entries()) {
        if (i > 0) all &&= node.operators[i - 1] === '&&';
        chained = i > 0 && all && node.commands[i - 1]?.type === 'Command';
        const r = simple(c);
        if (r) return r;
      }
      return null;
    }
    if (node.type === 'Pipeline') {
      chained = false;
      // `time` only times the pipeline; `!` (zsh's `&!` reads as one to bash) is not taken as understood.
      if (node.prefixes.some((p) => p.type !== 'Time')) return refuse('compound', 'a pipeline prefixed with !');
      for (const c of node.commands) {
        const r = simple(c);
        if (r) return r;
      }
      return null;
    }
    if (node.type !== 'Command') return refuse('compound', `a ${node.type.toLowerCase()} (${source.slice(node.pos, Math.min(node.end, node.pos + 40))})`);
    if (node.prefix.some((p) => p.type === 'Assignment')) return refuse('assignment', 'a variable set for the command');
    if (!node.name) return refuse('assignment', 'a variable assignment');
    const words: string[] = [];
    for (const w of [node.name, ...node.suffix]) {
      if (w.type === 'Word') {
        const v = literalWord(w);
        if (v === null) return refuse('not_literal', `the word ${w.text.slice(0, 80)}`);
        words.push(v);
      } else if (w.type === 'Assignment') {
        if (!SAFE_UNQUOTED.test(w.text)) return refuse('not_literal', `the word ${w.text.slice(0, 80)}`);
        words.push(w.text);
      } else if (!harmlessRedirection(w)) {
        return refuse('redirection', `the redirection ${source.slice(w.pos, w.end).slice(0, 80)}`);
      }
    }
    for (const r of node.prefix) if (r.type !== 'Assignment' && !harmlessRedirection(r)) return refuse('redirection', `the redirection ${source.slice(r.pos, r.end).slice(0, 80)}`);
    const unwrapped = unwrap(words);
    if (!unwrapped.transparent) return refuse('opaque', `${programName(words[0] ?? '')} runs another command with other rights or settings`);
    if (unwrapped.argv.length === 0) return refuse('empty', 'a wrapper with no command');
    const opaque = opaqueReason(unwrapped.argv);
    if (opaque !== null) return refuse('opaque', opaque);
    const program = unwrapped.argv[0] ?? '';
    out.push({ argv: unwrapped.argv, changesDirectory: program === 'cd' || program === 'pushd' || program === 'popd', afterSuccessOfPrevious: chained });
    chained = false;
    return null;
  };
  for (const statement of script.commands) {
    const r = simple(statement.command);
    if (r) return r;
  }
  if (out.length === 0) return refuse('empty', 'no command');
  return { ok: true, commands: out };
}

/** Words of text a parser could not vouch for, split where a shell could start a new word or command. */
export function looseWords(text: string): string[] {
  return text.split(/[\s;&|()<>{}`$"'=\\*?![\]:,@^#~+]+/).filter((w) => w !== '').map(programName);
}

/** Parts of a word a shell expands into other words: their text may hold a command (zsh's `*(e:'rm x':)`). */
const EXPANDING = new Set(['Glob', 'ExtendedGlob']);

/** ssh's options that take a value: the first word after the options is the host, the rest the remote command. */
const SSH_VALUE = new Set(['-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w', '-B']);

/** Every program run anywhere in the script (lists, pipelines, subshells, functions, substitutions, -c strings). */
function collectRuns(script: ParsedScript, text: string, depth: number, runs: string[][], loose: string[]): void {
  let damaged = false;
  let dynamic = false;
  const assigned: string[] = [];
  const visit = (node: SyntaxNode): void => {
    if (node.type === 'Script' && node.errors && node.errors.length > 0) damaged = true;
    if (node.type === 'Word') {
      for (const part of node.parts ?? []) if (EXPANDING.has(part.type)) loose.push(...looseWords(part.text));
    } else if (node.type === 'Assignment') {
      assigned.push(node.text.slice(node.text.indexOf('=') + 1));
    } else if (node.type === 'Command' && node.name) {
      // A program named by an expansion (`$x y`, `$(echo rm) y`, `rm${IFS}-rf`): its text, and every value assigned
      // in the command, may be the program.
      // A brace expansion there (`{rm,-rf,y}`) is the program too.
      if (literalWord(node.name) === null && node.name.parts?.some((p) => p.type !== 'Literal' && p.type !== 'SingleQuoted' && p.type !== 'DoubleQuoted')) {
        dynamic = true;
        loose.push(...looseWords(node.name.text));
      }
      const words = [node.name, ...node.suffix].flatMap((w) => (w.type === 'Word' ? [w.value] : w.type === 'Assignment' ? [w.text] : []));
      argvRuns(words, depth, runs, loose);
    } else if (node.type === 'Pipeline') {
      // `echo 'rm -rf y' | sh`: a shell reading its input from a command that prints words.
      node.commands.forEach((c, i) => {
        const before = node.commands[i - 1];
        if (i === 0 || c.type !== 'Command' || before?.type !== 'Command' || !c.name || !before.name) return;
        if (!SHELLS.has(programName(c.name.value)) || !['echo', 'printf'].includes(programName(before.name.value))) return;
        analyseInto(before.suffix.flatMap((w) => (w.type === 'Word' ? [w.value] : [])).join(' '), depth + 1, runs, loose);
      });
    }
    forEachChild(node, visit);
  };
  forEachChild(script, visit);
  if (dynamic) for (const value of assigned) loose.push(...looseWords(value));
  if (damaged) loose.push(...looseWords(text));
}

/** What a command given as words runs: the program inside its wrappers, and what that program runs in turn. */
function argvRuns(words: readonly string[], depth: number, runs: string[][], loose: string[]): void {
  if (depth > MAX_DEPTH) {
    loose.push(...words.flatMap(looseWords));
    return;
  }
  const seen = unwrap(words);
  const inner = (text: string) => analyseInto(text, depth + 1, runs, loose);
  const nested = (argv: readonly string[]) => argvRuns(argv, depth + 1, runs, loose);
  for (const s of seen.strings) inner(s);
  if (seen.argv.length === 0) return;
  const [program = '', ...args] = seen.argv;
  const name = programName(program);
  runs.push([name, ...args]);
  // An option the wrapper table does not know may have taken the program's place: any later word may be the program.
  if (seen.uncertain) for (let i = 1; i < seen.argv.length; i++) runs.push([programName(seen.argv[i] ?? ''), ...seen.argv.slice(i + 1)]);
  if (SHELLS.has(name) || name === 'su' || name === 'script' || name === 'flock') {
    args.forEach((w, i) => {
      if (COMMAND_FLAG.test(w) && args[i + 1] !== undefined) inner(args[i + 1] ?? '');
    });
  }
  if (name === 'eval' || name === 'watch' || name === 'trap' || name === 'fc' || name === 'parallel') inner(args.join(' '));
  if (name === 'ssh') {
    let i = 0;
    while (i < args.length && (args[i] ?? '').startsWith('-')) i += SSH_VALUE.has(args[i] ?? '') ? 2 : 1;
    if (args.length > i + 1) inner(args.slice(i + 1).join(' '));
  }
  if (name === 'alias') for (const a of args) if (a.includes('=')) inner(a.slice(a.indexOf('=') + 1));
  // `hash -p /bin/rm ls`: the name now runs that program.
  if (name === 'hash') args.forEach((w, i) => w === '-p' && args[i + 1] !== undefined && runs.push([programName(args[i + 1] ?? '')]));
  if (name === 'xargs' || name === 'parallel' || name === 'flock' || name === 'watch') {
    // The options' values are not known here: every later word may start the command.
    const at = args.findIndex((w) => !w.startsWith('-'));
    if (at !== -1) for (let i = at; i < args.length; i++) nested(args.slice(i));
  }
  if (name === 'find' || name === 'fd') {
    args.forEach((w, i) => {
      if (!/^-(exec|execdir|ok|okdir|x|X|-exec|-exec-batch)$/.test(w)) return;
      const end = args.findIndex((e, j) => j > i && (e === ';' || e === '+'));
      nested(args.slice(i + 1, end === -1 ? undefined : end));
    });
  }
  if (name === 'git') args.forEach((w, i) => {
    if (w === '-c' && args[i + 1]?.includes('=')) inner((args[i + 1] ?? '').slice((args[i + 1] ?? '').indexOf('=') + 1).replace(/^!/, ''));
    if ((w === '-x' || w === '--exec' || w === 'foreach' || w === 'run') && args[i + 1] !== undefined) inner(args.slice(i + 1).join(' '));
  });
  for (const w of args) {
    const option = EXEC_OPTION.exec(w);
    if (option && w.includes('=')) inner(w.slice(w.indexOf('=') + 1).replace(/^exec=/, ''));
  }
}

function analyseInto(text: string, depth: number, runs: string[][], loose: string[]): ParsedScript | null {
  if (depth > MAX_DEPTH || text.length > MAX_COMMAND_LENGTH) {
    loose.push(...looseWords(text));
    return null;
  }
  let script: ParsedScript;
  try {
    script = parse(text);
  } catch {
    loose.push(...looseWords(text));
    return null;
  }
  if (script.errors && script.errors.length > 0) loose.push(...looseWords(text));
  collectRuns(script, text, depth, runs, loose);
  return script;
}

/** What a rule may conclude from a shell command. Pure: the same text gives the same answer. */
export function analyseCommand(text: string): ShellAnalysis {
  const runs: string[][] = [];
  const loose: string[] = [];
  if (text.length > MAX_COMMAND_LENGTH) return { allowable: refuse('too_long', `over ${MAX_COMMAND_LENGTH} characters`), runs, loose: looseWords(text) };
  const script = analyseInto(text, 0, runs, loose);
  let allowable: Allowable;
  if (script === null) allowable = refuse('unparsed', 'the command could not be read');
  else if (script.errors && script.errors.length > 0) allowable = refuse('unparsed', script.errors[0]?.message ?? 'a syntax error');
  else if (/[\0\r]/.test(text)) allowable = refuse('not_literal', 'a control character');
  else allowable = literalCommands(script, text);
  return { allowable, runs, loose };
}

/** Whether a deny rule's words (`rm`, `git push`) name something the command may run. Program names compare without case: macOS's disk does. */
export function mayRun(analysis: ShellAnalysis, prefix: readonly string[]): boolean {
  const [first, ...rest] = prefix;
  if (first === undefined) return false;
  const program = programName(first).toLowerCase();
  const starts = (words: readonly string[]) => (words[0] ?? '').toLowerCase() === program && rest.every((w, i) => words[i + 1] === w);
  if (analysis.runs.some(starts)) return true;
  return analysis.loose.some((w, i) => w.toLowerCase() === program && rest.every((r, j) => analysis.loose[i + 1 + j] === r));
}
