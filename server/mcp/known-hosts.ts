/**
 * Hosts whose dialog is known not to reach a person, by what they say of themselves: `auto` asks go straight to the
 * extension there instead of waiting out a dialog that never comes. Data, one row per measured behaviour, each with
 * its evidence; `matchKnownHost` is the only rule. A row matches on the clientInfo name exactly, a version range when
 * the behaviour was measured on some versions only, and conditions that tell apart two modes of one product that send
 * the same clientInfo (one shows the dialog, the other does not): the protocol era, a declared extension, a field of
 * the request's own `_meta`.
 */
import { isObject, valueAt } from '../../shared/field-issues.js';

export type KnownHostBehaviour = 'auto_declines' | 'drops';

export interface KnownHost {
  id: string;
  /** `clientInfo.name`, compared exactly. */
  name: string;
  /** Dotted-number bounds on `clientInfo.version`: `from` inclusive, `below` exclusive. Absent: any version. */
  versions?: { from?: string; below?: string };
  /** The row applies only in this protocol era. */
  era?: '2025' | '2026-07-28';
  /** The row applies only when the client does NOT declare this extension under `capabilities.extensions`. */
  lacksExtension?: string;
  /** The row applies only when the tool call's `_meta` holds this string at this path. */
  requestMeta?: { path: readonly string[]; equals: string };
  behaviour: KnownHostBehaviour;
  /** What was measured, where and when, and how sure the match is. */
  evidence: string;
}

/** What a host says of itself on one request: its clientInfo and capabilities (both eras), the era, the call's `_meta`. */
export interface HostSelf {
  clientInfo: unknown;
  capabilities: unknown;
  era: '2025' | '2026-07-28';
  requestMeta: unknown;
}

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const MEASURED = 'Measured 2026-12-02 with the real host against a mock model API (evidence/known-hosts.md; notes/claude-code.md).';

/**
 * A row only for behaviour seen on a real host. Narrow on purpose: an auto-declining host a row misses still reaches
 * the extension in the same call (a "no" under 250 ms is rerouted), while a row that matched a host whose dialog works
 * would send every person there to the extension.
 */
export const KNOWN_HOSTS: readonly KnownHost[] = [
  {
    id: 'claude-code-print',
    name: 'claude-code',
    versions: { from: '2.1.332', below: '2.2.0' },
    // In the 2025 era (Claude Code falls back to `initialize` when the server is slow to answer `server/discover`)
    // both modes send the same capabilities, so print mode cannot be told apart there.
    era: '2026-07-28',
    lacksExtension: TASKS_EXTENSION,
    behaviour: 'auto_declines',
    evidence:
      'Claude Code 2.1.332 in print mode (-p; text, json and stream-json) answers every elicitation "cancel" in 9-28 ms ' +
      'without a dialog. On 2026-07-28 it declares capabilities {roots, elicitation: {form, url}} while interactive mode, ' +
      `whose dialog works, adds the extension io.modelcontextprotocol/tasks; clientInfo is the same in both. ${MEASURED}`,
  },
  {
    id: 'codex-exec',
    name: 'codex-mcp-client',
    versions: { from: '0.171.0', below: '0.172.0' },
    requestMeta: { path: ['x-codex-turn-metadata', 'turn_trigger'], equals: 'exec' },
    behaviour: 'auto_declines',
    evidence:
      'Codex 0.171.0 `codex exec` answers every elicitation "decline" in 1-6 ms without a dialog; the TUI draws the form. ' +
      'Both send the same initialize (clientInfo codex-mcp-client 0.171.0, protocol 2025-06-18); only each tools/call\'s ' +
      `_meta["x-codex-turn-metadata"].turn_trigger differs: "exec" vs "user" (an undocumented field). ${MEASURED}`,
  },
  {
    id: 'cursor-drops',
    name: 'cursor-vscode',
    behaviour: 'drops',
    evidence:
      'Cursor 3.10 drops stdio elicitations silently: no dialog, no answer until the request times out (issue 18, a ' +
      'real host). The clientInfo name "cursor-vscode" is taken from public MCP code that lists clients, not measured ' +
      'here; those sources show clientInfo.version "1.0.0", not the product version, so the row cannot single out ' +
      '3.10 and applies to every version that sends this name.',
  },
];

/** `2.1.332` → [2, 1, 332]; a pre-release or build suffix is ignored; anything else is null. */
function versionParts(version: string): number[] | null {
  const match = /^v?(\d+(?:\.\d+)*)(?:[-+].*)?$/.exec(version.trim());
  return match?.[1] ? match[1].split('.').map(Number) : null;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function inRange(version: unknown, range: KnownHost['versions']): boolean {
  if (!range) return true;
  // A range was measured: a version that is missing or not a dotted number is not known to be in it.
  const parts = typeof version === 'string' ? versionParts(version) : null;
  if (!parts) return false;
  const from = range.from ? versionParts(range.from) : null;
  const below = range.below ? versionParts(range.below) : null;
  return (!from || compareVersions(parts, from) >= 0) && (!below || compareVersions(parts, below) < 0);
}

function declaresExtension(capabilities: unknown, name: string): boolean {
  return isObject(capabilities) && isObject(capabilities.extensions) && Object.hasOwn(capabilities.extensions, name);
}

function matches(row: KnownHost, host: HostSelf, name: string, version: unknown): boolean {
  if (row.name !== name || !inRange(version, row.versions)) return false;
  if (row.era !== undefined && row.era !== host.era) return false;
  if (row.lacksExtension !== undefined && declaresExtension(host.capabilities, row.lacksExtension)) return false;
  return row.requestMeta === undefined || valueAt(host.requestMeta, row.requestMeta.path) === row.requestMeta.equals;
}

/** The first row the host matches on this request; null when none does. */
export function matchKnownHost(host: HostSelf, table: readonly KnownHost[] = KNOWN_HOSTS): KnownHost | null {
  const { clientInfo } = host;
  if (!isObject(clientInfo) || typeof clientInfo.name !== 'string') return null;
  const { name, version } = clientInfo;
  return table.find((row) => matches(row, host, name, version)) ?? null;
}

/** What a route and the doctor say of the row that decided it. */
export function knownHostWhy(row: KnownHost): string {
  const does = row.behaviour === 'auto_declines' ? 'answers every dialog "no" by itself' : 'drops dialogs without showing them';
  return `this host is known to the table of hosts (${row.id}): it ${does}`;
}
