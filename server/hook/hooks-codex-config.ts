// Codex's config.toml: this install's hooks live in one marked block of `[[hooks.<Event>]]` tables, so the person's
// own text (comments, order, layout) is never rewritten, only the block is added, replaced or taken out. A text block
// cannot extend everything TOML allows (an array written inline is closed, and so is an inline table), so the file is
// read with a TOML parser first, every candidate is parsed again, and it is written only when it reads as the same
// settings with exactly this install's hooks: anything else is refused with the key to fix by hand, nothing changed.
// Its own module, apart from hooks-settings.ts: the parser is loaded only by the `hooks` command, never at start-up.
import { parse, TomlError } from 'smol-toml';
import { isObject } from '../../shared/field-issues.js';
import type { HookEvent, HookHost } from './hosts/hook-host.js';
import { hookEntry, isOurCommand, nothingOf, type Desired, type Installed, type Merged } from './hooks-settings.js';

export const TOML_BEGIN = '# >>> elicitly-companion hooks (written by `elicitly-companion hooks install`; it replaces this block)';
export const TOML_END = '# <<< elicitly-companion hooks';
/** How every version so far has begun the block: the text after it has changed and may change again. */
const BEGIN_PREFIX = '# >>> elicitly-companion hooks';

type Table = Record<string, unknown>;
type Parsed = { ok: true; table: Table } | { ok: false; error: unknown };

function parseToml(text: string): Parsed {
  try {
    // 64-bit integers are valid TOML (Codex reads them): BigInt where a number would lose digits.
    return { ok: true, table: parse(text, { integersAsBigInt: 'asNeeded' }) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The parser's own words, without the excerpt it draws below them. */
function parserSays(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n')[0] ?? message;
  const words = first.replace(/^Invalid TOML document: /, '');
  return error instanceof TomlError ? `line ${error.line}, column ${error.column}: ${words}` : words;
}

/** Codex's hook group for one event, as the block writes it and as it must read back. */
interface Group {
  matcher: string;
  hooks: { type: string; command: string; timeout: number }[];
}

/** One of our hooks as found in a parsed file: under which event, in which group. */
interface Found {
  event: string;
  group: unknown;
}

function wantedGroups(desired: Desired): { event: HookEvent; group: Group }[] {
  return desired.events.map((event) => ({
    event,
    group: {
      matcher: desired.host.matcher(event) ?? '*',
      hooks: [{ type: 'command', ...hookEntry(desired, event) }],
    },
  }));
}

/** Every group, under any event, that holds a hook of ours. */
function ours(table: Table, host: string): Found[] {
  const hooks = table.hooks;
  if (!isObject(hooks)) return [];
  const found: Found[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (isObject(group) && Array.isArray(group.hooks) && group.hooks.some((h) => isObject(h) && isOurCommand(h.command, host))) found.push({ event, group });
    }
  }
  return found;
}

/** The parsed file without our hooks: what must read the same before and after a merge. */
function withoutOurs(table: Table, host: string): Table {
  const hooks = table.hooks;
  if (!isObject(hooks)) return table;
  const kept: Table = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      kept[event] = groups;
      continue;
    }
    const left: unknown[] = [];
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        left.push(group);
        continue;
      }
      const others = group.hooks.filter((h) => !(isObject(h) && isOurCommand(h.command, host)));
      if (others.length === group.hooks.length) left.push(group);
      else if (others.length > 0) left.push({ ...group, hooks: others });
    }
    // An event whose only groups were ours goes with them; one the person left empty stays.
    if (left.length > 0 || groups.length === 0) kept[event] = left;
  }
  const rest: Table = { ...table, hooks: kept };
  // An empty hooks table and none read the same: the block's own tables may be what made it.
  if (Object.keys(kept).length === 0) delete rest.hooks;
  return rest;
}

/** Equal as TOML values: the parser's objects have no prototype, ours do, and its dates compare by their text. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.toISOString() === b.toISOString();
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameValue(a[k], b[k]));
  }
  return Object.is(a, b);
}

/** Whether the file holds exactly the wanted groups of ours: one per wanted event, each alone, each as written. */
function exactly(found: readonly Found[], wanted: readonly { event: HookEvent; group: Group }[]): boolean {
  return found.length === wanted.length && wanted.every((w) => found.filter((f) => f.event === w.event && sameValue(f.group, w.group)).length === 1);
}

/** The file's lines, each with its own line end kept, so the text around the block is never rewritten. */
const splitLines = (text: string) => text.split(/(?<=\n)/);
const bare = (line: string) => line.replace(/\r?\n$/, '');

/** The marked block's span in the file's lines (end inclusive), or null; a begin without its end is refused. */
function findBlock(lines: readonly string[]): { start: number; end: number } | null | 'broken' {
  const start = lines.findIndex((l) => bare(l).startsWith(BEGIN_PREFIX));
  const end = lines.findIndex((l) => bare(l).startsWith(TOML_END));
  if (start === -1 && end === -1) return null;
  if (start === -1 || end === -1 || end < start) return 'broken';
  return { start, end };
}

function blockText(desired: Desired, eol: string): string {
  const lines = [TOML_BEGIN];
  for (const { event, group } of wantedGroups(desired)) {
    const hook = group.hooks[0]!;
    lines.push(`[[hooks.${event}]]`, `matcher = ${JSON.stringify(group.matcher)}`, `[[hooks.${event}.hooks]]`, `type = ${JSON.stringify(hook.type)}`, `command = ${JSON.stringify(hook.command)}`, `timeout = ${hook.timeout}`);
  }
  lines.push(TOML_END);
  return lines.join(eol) + eol;
}

/** A TOML value's kind, as the person would name it in their file. */
function kind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (isObject(value)) return 'a table';
  return typeof value === 'bigint' ? 'a number' : `a ${typeof value}`;
}

/** Why the block's tables cannot go into this file, naming the key the person has to change by hand. */
function conflict(rest: Table, desired: Desired, error: unknown): string {
  const hooks = rest.hooks;
  if (hooks !== undefined && !isObject(hooks)) {
    return `defines hooks as ${kind(hooks)}, not a table: Codex reads its hooks from [[hooks.<Event>]] tables; fix it by hand, nothing was changed`;
  }
  for (const event of desired.events) {
    const value = isObject(hooks) ? hooks[event] : undefined;
    if (value === undefined) continue;
    const form = Array.isArray(value)
      ? `as an array written inline, which [[hooks.${event}]] tables cannot extend (TOML forbids defining an array twice)`
      : `as ${kind(value)}, where Codex reads [[hooks.${event}]] tables`;
    return `defines hooks.${event} ${form}; rewrite it by hand as [[hooks.${event}]] tables (each hook as [[hooks.${event}.hooks]]) and run this again; nothing was changed`;
  }
  if (isObject(hooks)) {
    return `defines hooks as an inline table ("hooks = { … }"), which TOML keeps closed; rewrite it by hand as a [hooks] table (its arrays as [[hooks.<Event>]] tables) and run this again; nothing was changed`;
  }
  return `cannot take this install's [[hooks.<Event>]] tables (${parserSays(error)}); fix the file by hand, nothing was changed`;
}

/** The installed entries in a Codex config.toml, wherever they are (a file that is not TOML has none). */
export function codexInstalled(text: string | null, host: HookHost): Installed[] {
  if (text === null) return [];
  const parsed = parseToml(text);
  if (!parsed.ok) return [];
  const out: Installed[] = [];
  for (const { event, group } of ours(parsed.table, host.id)) {
    if (!host.events.includes(event) || !isObject(group) || !Array.isArray(group.hooks)) continue;
    for (const h of group.hooks) {
      if (isObject(h) && isOurCommand(h.command, host.id)) out.push({ event, command: String(h.command), timeout: typeof h.timeout === 'number' ? h.timeout : null });
    }
  }
  return out;
}

/**
 * Codex's config.toml with exactly `desired.events` hooked to this install: our marked block replaced in place, or
 * appended the first time, or taken out when no event is wanted; every other line as it was. Refused, with why, when
 * the file is not TOML, when a hook of ours is outside the block, when the block's tables cannot extend what the file
 * defines, or when the result would not read back as the same settings with exactly our hooks.
 */
export function mergeCodexConfig(text: string | null, desired: Desired): Merged {
  const source = text ?? '';
  const before = parseToml(source);
  if (!before.ok) return { ok: false, why: `is not valid TOML (${parserSays(before.error)}); fix it, nothing was changed` };
  const wanted = wantedGroups(desired);
  const present = ours(before.table, desired.host.id);
  if (exactly(present, wanted)) return { ok: true, text: source, changes: [] };

  const lines = splitLines(source);
  const block = findBlock(lines);
  if (block === 'broken') return { ok: false, why: `holds "${BEGIN_PREFIX}" without "${TOML_END}" after it (or the other way round); fix the block by hand, nothing was changed` };
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  let candidate: string;
  let restText: string;
  if (block === null) {
    restText = source;
    const base = source === '' || source.endsWith('\n') ? source : source + eol;
    candidate = wanted.length === 0 ? source : `${base}${base === '' ? '' : eol}${blockText(desired, eol)}`;
  } else {
    // The blank line an install put before the block goes with it when the block goes.
    const from = wanted.length === 0 && block.start > 0 && bare(lines[block.start - 1]!) === '' ? block.start - 1 : block.start;
    restText = [...lines.slice(0, from), ...lines.slice(block.end + 1)].join('');
    const replacement = wanted.length === 0 ? '' : blockText(desired, eol);
    // A block that ended the file without a line end keeps it that way.
    const tail = lines.slice(block.end + 1).join('');
    const ending = block.end === lines.length - 1 && !lines[block.end]!.endsWith('\n') ? replacement.replace(/\r?\n$/, '') : replacement;
    candidate = [...lines.slice(0, from), ending, tail].join('');
  }

  const rest = parseToml(restText);
  if (!rest.ok) return { ok: false, why: `cannot be read without its marked block (${parserSays(rest.error)}); fix the block by hand, nothing was changed` };
  const outside = ours(rest.table, desired.host.id);
  if (outside.length > 0) {
    const keys = [...new Set(outside.map((f) => `hooks.${f.event}`))].join(', ');
    return { ok: false, why: `has a hook of this install outside its marked block (${keys}); take it out by hand and run this again, nothing was changed` };
  }

  const after = parseToml(candidate);
  if (!after.ok) return { ok: false, why: conflict(rest.table, desired, after.error) };
  // What is written must read as the same settings as before, with exactly the wanted hooks of ours.
  if (!exactly(ours(after.table, desired.host.id), wanted) || !sameValue(withoutOurs(after.table, desired.host.id), withoutOurs(before.table, desired.host.id))) {
    return {
      ok: false,
      why: `would not read back as the same settings with exactly this install's hooks, so nothing was changed (a key written below "${TOML_END}" belongs to the block's last table: move it above the block by hand)`,
    };
  }

  const changes: string[] = [];
  for (const event of new Set([...present.map((f) => f.event), ...wanted.map((w) => w.event)])) {
    const had = present.filter((f) => f.event === event);
    const wants = wanted.find((w) => w.event === event);
    if (wants && had.length === 1 && sameValue(had[0]!.group, wants.group)) continue;
    changes.push(`${had.length === 0 ? 'added' : wants ? 'updated' : 'removed'} ${event}`);
  }
  return { ok: true, text: candidate, changes };
}

export function unmergeCodexConfig(text: string | null, host: HookHost): Merged {
  return mergeCodexConfig(text, nothingOf(host));
}
