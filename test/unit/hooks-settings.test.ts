// The installer's pure merge: this install's hook entries in and out of Claude Code's settings.json, never touching
// anyone else's, idempotent, and reporting exactly what changed (Codex's config.toml: hooks-codex-config.test.ts).
import { describe, expect, it } from 'vitest';
import { hookEntry, isOurCommand, jsonInstalled, mergeJsonSettings, nothingOf, type Desired } from '../../server/hook/hooks-settings.js';
import { claudeCode } from '../../server/hook/hosts/claude-code.js';
import { codex } from '../../server/hook/hosts/codex.js';

const claudeInstalled = (text: string | null) => jsonInstalled(text, 'claude-code');
const mergeClaudeSettings = (text: string | null, desired: Desired) => mergeJsonSettings(text, desired);
const unmergeClaudeSettings = (text: string | null) => mergeJsonSettings(text, nothingOf(claudeCode));
const withCompanions = (id: 'claude-code' | 'codex', events: readonly string[]) => (id === 'claude-code' ? claudeCode : codex).withCompanions(events);

const claude: Desired = { host: claudeCode, node: '/usr/bin/node', script: '/opt/my tools/main.js', events: ['PermissionRequest', 'Elicitation'], waitSeconds: 110, waitingDir: '/state/waiting-prompts' };
const CMD = (event: string, wait = 110) => `/usr/bin/node '/opt/my tools/main.js' hook --host claude-code --wait ${wait} ${event}`;
const theirs = { matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/local/bin/audit.sh', timeout: 5 }] };
const other = { model: 'opus', permissions: { allow: ['Bash(npm test)'] }, hooks: { PreToolUse: [theirs], PermissionRequest: [theirs] } };

const ok = (merged: ReturnType<typeof mergeClaudeSettings>) => {
  if (!merged.ok) throw new Error(merged.why);
  // These files keep the person's own settings: a merge never removes them.
  if (merged.text === null) throw new Error('the file would be removed');
  return { ...merged, text: merged.text };
};

describe('hookEntry / isOurCommand', () => {
  it('quotes for the shell and is recognized as ours for its host only', () => {
    const { command, timeout } = hookEntry({ node: '/usr/bin/node', script: "/it's/main.js", host: codex, waitSeconds: 30, waitingDir: '' }, 'PermissionRequest');
    expect(command).toBe(`/usr/bin/node '/it'\\''s/main.js' hook --host codex --wait 30 PermissionRequest`);
    expect(timeout).toBe(40);
    expect(isOurCommand(command, 'codex')).toBe(true);
    expect(isOurCommand(command, 'claude-code')).toBe(false);
    expect(isOurCommand('/usr/local/bin/audit.sh', 'codex')).toBe(false);
  });

  it('a PostToolUse hook starts Node only when the folder of waited-on prompts is not empty, and is still ours', () => {
    const { command, timeout } = hookEntry({ node: '/usr/bin/node', script: '/opt/main.js', host: claudeCode, waitSeconds: 110, waitingDir: "/s t/it's" }, 'PostToolUse');
    expect(command).toBe(`[ -z "$(ls -A '/s t/it'\\''s' 2>/dev/null)" ] || /usr/bin/node /opt/main.js hook --host claude-code PostToolUse`);
    expect(timeout).toBe(10);
    expect(isOurCommand(command, 'claude-code')).toBe(true);
  });

  it.each([
    ['claude-code', ['PermissionRequest'], ['PermissionRequest', 'PostToolUse', 'PostToolUseFailure']],
    ['claude-code', ['Elicitation'], ['Elicitation']],
    ['claude-code', ['PermissionRequest', 'PostToolUse'], ['PermissionRequest', 'PostToolUse', 'PostToolUseFailure']],
    ['codex', ['PermissionRequest'], ['PermissionRequest']],
  ] as const)('%s %j is installed as %j: a PermissionRequest of Claude Code brings the hooks that see it answered in the terminal', (host, events, expected) => {
    expect(withCompanions(host, events)).toEqual(expected);
  });
});

describe('Claude Code settings.json', () => {
  it.each([
    ['no file', null, { hooks: { PermissionRequest: [{ matcher: '*', hooks: [{ type: 'command', command: CMD('PermissionRequest'), timeout: 120 }] }], Elicitation: [{ hooks: [{ type: 'command', command: CMD('Elicitation'), timeout: 120 }] }] } }],
    [
      'other settings and hooks',
      JSON.stringify(other),
      {
        ...other,
        hooks: {
          PreToolUse: [theirs],
          PermissionRequest: [theirs, { matcher: '*', hooks: [{ type: 'command', command: CMD('PermissionRequest'), timeout: 120 }] }],
          Elicitation: [{ hooks: [{ type: 'command', command: CMD('Elicitation'), timeout: 120 }] }],
        },
      },
    ],
  ])('install into %s: our entries added, nothing else touched', (_name, before, expected) => {
    const merged = ok(mergeClaudeSettings(before, claude));
    expect(JSON.parse(merged.text)).toEqual(expected);
    expect(merged.changes).toEqual([`added PermissionRequest: ${CMD('PermissionRequest')} (timeout 120 s)`, `added Elicitation: ${CMD('Elicitation')} (timeout 120 s)`]);
  });

  it('install twice: the second changes nothing; another wait replaces the entry in place of a second one', () => {
    const once = ok(mergeClaudeSettings(JSON.stringify(other), claude));
    const twice = ok(mergeClaudeSettings(once.text, claude));
    expect(twice).toEqual({ ok: true, text: once.text, changes: [] });
    const longer = ok(mergeClaudeSettings(once.text, { ...claude, waitSeconds: 300 }));
    expect(claudeInstalled(longer.text)).toEqual([
      { event: 'PermissionRequest', command: CMD('PermissionRequest', 300), timeout: 310 },
      { event: 'Elicitation', command: CMD('Elicitation', 300), timeout: 310 },
    ]);
    expect(longer.changes.every((c) => c.startsWith('updated '))).toBe(true);
  });

  it('fewer events: the dropped event is removed, with its group', () => {
    const once = ok(mergeClaudeSettings(null, claude));
    const fewer = ok(mergeClaudeSettings(once.text, { ...claude, events: ['PreToolUse'] }));
    expect(fewer.changes).toEqual([expect.stringMatching(/^added PreToolUse: /), 'removed PermissionRequest', 'removed Elicitation']);
    expect(JSON.parse(fewer.text)).toEqual({ hooks: { PreToolUse: [{ matcher: 'Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*', hooks: [{ type: 'command', command: CMD('PreToolUse'), timeout: 120 }] }] } });
  });

  it('uninstall: other hooks and settings exactly as before; an empty hooks object goes', () => {
    const installed = ok(mergeClaudeSettings(JSON.stringify(other), claude));
    const removed = ok(unmergeClaudeSettings(installed.text));
    expect(JSON.parse(removed.text)).toEqual(other);
    expect(removed.changes).toEqual(['removed PermissionRequest', 'removed Elicitation']);
    const alone = ok(unmergeClaudeSettings(ok(mergeClaudeSettings('{"model":"x"}', claude)).text));
    expect(JSON.parse(alone.text)).toEqual({ model: 'x' });
    expect(ok(unmergeClaudeSettings(JSON.stringify(other)))).toEqual({ ok: true, text: JSON.stringify(other), changes: [] });
  });

  it('our entry shared in a group with someone else\'s: only ours goes', () => {
    const shared = { hooks: { PermissionRequest: [{ matcher: '*', hooks: [theirs.hooks[0], { type: 'command', command: CMD('PermissionRequest', 50), timeout: 60 }] }] } };
    expect(JSON.parse(ok(unmergeClaudeSettings(JSON.stringify(shared))).text)).toEqual({ hooks: { PermissionRequest: [{ matcher: '*', hooks: [theirs.hooks[0]] }] } });
  });

  it.each([
    ['{ not json', /is not valid JSON/],
    ['[1]', /is not a JSON object/],
    ['{"hooks": []}', /"hooks" is not an object/],
  ])('a file it cannot read as settings (%s) is refused, never overwritten', (text, why) => {
    const merged = mergeClaudeSettings(text, claude);
    expect(merged.ok).toBe(false);
    if (!merged.ok) expect(merged.why).toMatch(why);
  });
});
