import { describe, expect, it } from 'vitest';
import { REROUTE_THRESHOLD_MS, automaticNo } from '../../server/mcp/ask-routing.js';
import type { HostSelf } from '../../server/mcp/known-hosts.js';
import { KNOWN_HOSTS, TASKS_EXTENSION, matchKnownHost } from '../../server/mcp/known-hosts.js';

// Issue 18 items 2 and 5: which "no" reroutes an ask, and which hosts go straight to the extension.

/** Claude Code 2.1.332's capabilities as measured on 2026-07-28 (evidence/known-hosts.md): print mode, and interactive mode. */
const PRINT_CAPS = { roots: { listChanged: true }, elicitation: { form: {}, url: {} } };
const INTERACTIVE_CAPS = { ...PRINT_CAPS, extensions: { [TASKS_EXTENSION]: {} } };

describe('matchKnownHost', () => {
  const claude = { name: 'claude-code', title: 'Claude Code', version: '2.1.332' };
  const codex = { name: 'codex-mcp-client', title: 'Codex', version: '0.171.0' };
  const CODEX_CAPS = { experimental: { 'codex/auth-change': {} }, elicitation: { form: {}, url: {} } };
  const turn = (trigger: string) => ({ progressToken: 1, 'x-codex-turn-metadata': { turn_trigger: trigger, codex_version: '0.171.0' } });
  const era2026 = '2026-07-28' as const;
  const rows: [string, HostSelf, string | null][] = [
    ['Claude Code print mode, the measured version', { clientInfo: claude, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, 'claude-code-print'],
    ['Claude Code print mode, a later patch', { clientInfo: { ...claude, version: '2.1.400' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, 'claude-code-print'],
    ['Claude Code interactive mode: its dialog works', { clientInfo: claude, capabilities: INTERACTIVE_CAPS, era: era2026, requestMeta: {} }, null],
    ['Claude Code on the 2025 fallback: both modes send the same, so no row', { clientInfo: claude, capabilities: PRINT_CAPS, era: '2025', requestMeta: {} }, null],
    ['Claude Code before the measured version', { clientInfo: { ...claude, version: '2.1.331' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['Claude Code 2.2.0: not measured', { clientInfo: { ...claude, version: '2.2.0' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['a pre-release of the measured version counts as it', { clientInfo: { ...claude, version: '2.1.332-beta.1' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, 'claude-code-print'],
    ['no version where a range was measured', { clientInfo: { name: 'claude-code' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['a version that is not dotted numbers', { clientInfo: { ...claude, version: 'latest' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['codex exec: the call says turn_trigger "exec"', { clientInfo: codex, capabilities: CODEX_CAPS, era: '2025', requestMeta: turn('exec') }, 'codex-exec'],
    ['the Codex TUI: turn_trigger "user", its form works', { clientInfo: codex, capabilities: CODEX_CAPS, era: '2025', requestMeta: turn('user') }, null],
    ['Codex without the turn metadata', { clientInfo: codex, capabilities: CODEX_CAPS, era: '2025', requestMeta: undefined }, null],
    ['codex exec of another version: not measured', { clientInfo: { ...codex, version: '0.172.0' }, capabilities: CODEX_CAPS, era: '2025', requestMeta: turn('exec') }, null],
    ['Cursor, whatever version it sends', { clientInfo: { name: 'cursor-vscode', version: '1.0.0' }, capabilities: { elicitation: {} }, era: '2025', requestMeta: {} }, 'cursor-drops'],
    ['a name differing in case is another host', { clientInfo: { ...claude, name: 'Claude-Code' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['an unknown host', { clientInfo: { name: 'test-host-v1', version: '1.0.0' }, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['no clientInfo', { clientInfo: undefined, capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
    ['a clientInfo that is not an object', { clientInfo: 'claude-code', capabilities: PRINT_CAPS, era: era2026, requestMeta: {} }, null],
  ];
  it.each(rows)('%s', (_name, host, id) => {
    expect(matchKnownHost(host)?.id ?? null).toBe(id);
  });

  it('every row carries its evidence and a behaviour', () => {
    expect(new Set(KNOWN_HOSTS.map((row) => row.id)).size).toBe(KNOWN_HOSTS.length);
    for (const row of KNOWN_HOSTS) {
      expect(row.evidence.length, row.id).toBeGreaterThan(40);
      expect(['auto_declines', 'drops']).toContain(row.behaviour);
    }
  });
});

describe('automaticNo: the reroute rule', () => {
  const rows: [string, Parameters<typeof automaticNo>[0], boolean][] = [
    ['Codex exec declines in 1 ms', { action: 'decline', latencyMs: 1 }, true],
    ['Claude Code print mode cancels in 25 ms', { action: 'cancel', latencyMs: 25 }, true],
    ['just under the threshold', { action: 'decline', latencyMs: REROUTE_THRESHOLD_MS - 1 }, true],
    ['at the threshold: a person', { action: 'decline', latencyMs: REROUTE_THRESHOLD_MS }, false],
    ["a person's quick click at 300 ms", { action: 'decline', latencyMs: 300 }, false],
    ['a cancel at 1.5 s (the doctor still calls it autocanceled)', { action: 'cancel', latencyMs: 1500 }, false],
    ['a fast accept is an answer, not a "no"', { action: 'accept', latencyMs: 5 }, false],
    ['a fast error is not a "no"', { action: 'error', latencyMs: 5 }, false],
  ];
  it.each(rows)('%s', (_name, outcome, expected) => {
    expect(automaticNo(outcome)).toBe(expected);
  });

  it('is 250 ms, below the doctor\'s 2000 ms', () => {
    expect(REROUTE_THRESHOLD_MS).toBe(250);
  });
});
