// The hook bridge's pure parts: each host's stdin per event, the request a person reviews, the diff of an edit, and the
// decision JSON each host documents for each answer.
import { describe, expect, it } from 'vitest';
import type { PermissionRequest, PermissionResult } from '../../shared/permission.js';
import { claudeCode, sessionPermissions } from '../../server/hook/hosts/claude-code.js';
import type { HookHost } from '../../server/hook/hosts/hook-host.js';
import { hookHost } from '../../server/hook/hosts/registry.js';
import { elicitationAsk, mcpTool, permissionRequest } from '../../server/hook/hook-request.js';

/** The host by its id, as `hook --host` names it. */
const host = (id: string): HookHost => {
  const found = hookHost(id);
  if (!found) throw new Error(`no host ${id}`);
  return found;
};
const parseHookInput = (id: string, event: string, raw: unknown) => host(id).parse(event, raw);
/** The decision the request's own host prints. */
const permissionOutput = (request: PermissionRequest, result: PermissionResult, session = false) => host(request.host).output(request, result, session);
const elicitationOutput = (result: Parameters<NonNullable<HookHost['elicitationOutput']>>[0]) => {
  if (!claudeCode.elicitationOutput) throw new Error('Claude Code bridges forms');
  return claudeCode.elicitationOutput(result);
};
import { unifiedDiff } from '../../server/hook/unified-diff.js';

const base = { session_id: 'sess-1', transcript_path: '/t.jsonl', cwd: '/work/app', permission_mode: 'default' };
const claudePermission = (tool_name: string, tool_input: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...base,
  hook_event_name: 'PermissionRequest',
  tool_name,
  tool_input,
  permission_suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'localSettings' }],
  ...extra,
});
const noFiles = () => null;

function mapped(id: 'claude-code' | 'codex', event: 'PreToolUse' | 'PermissionRequest', raw: unknown, readFile: (p: string) => string | null = noFiles): PermissionRequest {
  const parsed = parseHookInput(id, event, raw);
  if (!parsed.ok || parsed.kind !== 'tool') throw new Error(`did not parse: ${JSON.stringify(parsed)}`);
  const request = permissionRequest(host(id), event, parsed.prompt, 110, readFile);
  if (!request.ok) throw new Error(request.why);
  return request.request;
}

describe('parseHookInput: each host and event', () => {
  it.each([
    ['claude-code', 'PreToolUse', { ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_1' }],
    ['claude-code', 'PermissionRequest', claudePermission('Bash', { command: 'touch a' })],
    ['claude-code', 'Elicitation', { ...base, hook_event_name: 'Elicitation', mcp_server_name: 'other', message: 'Pick', mode: 'form', requested_schema: { type: 'object', properties: {} } }],
    ['codex', 'PreToolUse', { ...base, hook_event_name: 'PreToolUse', model: 'gpt', turn_id: 't1', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'call_1' }],
    ['codex', 'PermissionRequest', { ...base, transcript_path: null, hook_event_name: 'PermissionRequest', model: 'gpt', turn_id: 't1', tool_name: 'Bash', tool_input: { command: 'touch a', description: 'why' } }],
  ] as const)('%s %s: the documented stdin parses, unknown fields tolerated', (host, event, raw) => {
    const parsed = parseHookInput(host, event, { ...raw, some_future_field: { nested: true } });
    expect(parsed.ok).toBe(true);
  });

  it.each([
    ['claude-code', 'PermissionRequest', { ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: 'touch a' }, /^tool_input: /],
    ['claude-code', 'PermissionRequest', { ...base, session_id: 7, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: {} }, /^session_id: /],
    ['codex', 'PreToolUse', { ...base, hook_event_name: 'PreToolUse', tool_input: {} }, /^tool_name: /],
    ['claude-code', 'PreToolUse', claudePermission('Bash', { command: 'x' }), /^hook_event_name: is "PermissionRequest" but this hook was installed for PreToolUse/],
    ['codex', 'Elicitation', { ...base, hook_event_name: 'Elicitation' }, /^Elicitation: not a Codex hook event the bridge handles/],
    ['claude-code', 'Elicitation', { ...base, hook_event_name: 'Elicitation', message: 'x' }, /^mcp_server_name: /],
    ['claude-code', 'PreToolUse', [1, 2], /^stdin: /],
  ] as const)('%s %s: a bad input names the field (%#)', (host, event, raw, issue) => {
    const parsed = parseHookInput(host, event, raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issue).toMatch(issue);
  });
});

describe('permissionRequest: the request a person reviews', () => {
  it('a Claude Code Bash prompt: the command, editable, the host suggestions kept', () => {
    const request = mapped('claude-code', 'PermissionRequest', claudePermission('Bash', { command: 'touch a', description: 'make a' }));
    expect(request).toEqual({
      kind: 'permission',
      message: 'Claude Code wants to run a command',
      host: 'claude-code',
      hostName: 'Claude Code',
      event: 'PermissionRequest',
      tool: 'Bash',
      input: { command: 'touch a', description: 'make a' },
      command: 'touch a',
      cwd: '/work/app',
      sessionId: 'sess-1',
      editable: true,
      suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'localSettings' }],
      timeoutSeconds: 110,
    });
  });

  it.each([
    ['codex', 'PermissionRequest', 'Bash', { command: 'touch a' }, { message: 'Codex wants to run a command', command: 'touch a', editable: false }],
    ['codex', 'PreToolUse', 'exec_command', { cmd: 'npm test' }, { message: 'Codex wants to run a command', command: 'npm test', editable: true }],
    ['claude-code', 'PreToolUse', 'mcp__github__create_issue', { title: 'x' }, { message: "Claude Code wants to use github's create_issue", mcp: { server: 'github', tool: 'create_issue' }, editable: true }],
    ['claude-code', 'PermissionRequest', 'WebFetch', { url: 'https://x' }, { message: 'Claude Code wants to use WebFetch', editable: true }],
    ['claude-code', 'PermissionRequest', 'Write', { file_path: '/work/app/n.txt', content: 'one\n' }, { message: 'Claude Code wants to write a file', path: '/work/app/n.txt', diff: '--- /dev/null\n+++ /work/app/n.txt\n@@ -0,0 +1 @@\n+one\n' }],
    ['codex', 'PreToolUse', 'apply_patch', { command: '*** Begin Patch\n*** Update File: src/a.ts\n-x\n+y\n*** End Patch' }, { message: 'Codex wants to edit a file', path: 'src/a.ts' }],
  ] as const)('%s %s %s → %j', (id, event, tool, input, expected) => {
    const hostFields = id === 'codex' ? { model: 'gpt', turn_id: 't' } : {};
    const request = mapped(id, event, { ...base, ...hostFields, hook_event_name: event, tool_name: tool, tool_input: input });
    expect(request).toMatchObject({ ...expected, tool, input, host: id, hostName: host(id).name, event });
    if (!('command' in expected)) expect(request.command).toBeUndefined();
  });

  it('an Edit: the diff of the whole file around the change when the file holds what it replaces', () => {
    const file = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const request = mapped('claude-code', 'PermissionRequest', claudePermission('Edit', { file_path: '/work/app/f.txt', old_string: 'e', new_string: 'E' }), (p) => (p === '/work/app/f.txt' ? file : null));
    expect(request.message).toBe('Claude Code wants to edit a file');
    expect(request.diff).toBe('--- /work/app/f.txt\n+++ /work/app/f.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n');
  });

  it('an Edit of a file it cannot read, and a MultiEdit: the edits\' own lines', () => {
    const edit = mapped('claude-code', 'PreToolUse', { ...base, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: 'x.ts', old_string: 'let a = 1;', new_string: 'const a = 1;' } });
    expect(edit.diff).toBe('--- x.ts\n+++ x.ts\n@@ -1 +1 @@\n-let a = 1;\n+const a = 1;\n');
    const multi = mapped('claude-code', 'PermissionRequest', claudePermission('MultiEdit', { file_path: '/f', edits: [{ old_string: 'one', new_string: 'two' }, { old_string: 'two', new_string: 'three', replace_all: true }] }), () => 'one\nx\n');
    expect(multi.diff).toBe('--- /f\n+++ /f\n@@ -1,2 +1,2 @@\n-one\n+three\n x\n');
  });

  it('too large to review: the host keeps its own prompt', () => {
    const parsed = parseHookInput('claude-code', 'PermissionRequest', claudePermission('Bash', { command: 'x'.repeat(70_000) }));
    if (!parsed.ok || parsed.kind !== 'tool') throw new Error('did not parse');
    expect(permissionRequest(claudeCode, 'PermissionRequest', parsed.prompt, 110, noFiles)).toEqual({ ok: false, why: 'tool_input.command: must be at most 65536 characters long, got 70000' });
  });

  it('mcpTool splits at the first double underscore after the server', () => {
    expect(mcpTool('mcp__my_server__do__it')).toEqual({ server: 'my_server', tool: 'do__it' });
    expect(mcpTool('Bash')).toBeNull();
  });
});

describe('elicitationAsk: another MCP server\'s form', () => {
  const input = (extra: Record<string, unknown>) => {
    const parsed = parseHookInput('claude-code', 'Elicitation', { ...base, hook_event_name: 'Elicitation', mcp_server_name: 'deployer', message: 'Which env?', ...extra });
    if (!parsed.ok || parsed.kind !== 'elicitation') throw new Error('did not parse');
    return parsed.prompt;
  };

  it('a valid schema becomes a form ask naming the server', () => {
    const schema = { type: 'object', properties: { env: { type: 'string', enum: ['dev', 'prod'] } }, required: ['env'] };
    expect(elicitationAsk(claudeCode, input({ mode: 'form', requested_schema: schema }), 60)).toEqual({
      ok: true,
      request: { kind: 'form', message: 'The MCP server "deployer" (in Claude Code) asks: Which env?', requestedSchema: schema, timeoutSeconds: 60 },
    });
  });

  it.each([
    [{ requested_schema: { type: 'object', properties: { x: { type: 'object' } } } }, /requested_schema/],
    [{ mode: 'url', url: 'https://x' }, /^mode: "url"/],
    [{}, /requested_schema/],
  ])('%j falls back', (extra, why) => {
    const mappedAsk = elicitationAsk(claudeCode, input(extra), 60);
    expect(mappedAsk.ok).toBe(false);
    if (!mappedAsk.ok) expect(mappedAsk.why).toMatch(why);
  });
});

describe('unifiedDiff', () => {
  it.each([
    ['equal texts', 'a\n', 'a\n', ''],
    ['a new file', null, 'x\ny\n', '--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+x\n+y\n'],
    ['emptied', 'x\n', '', '--- f\n+++ f\n@@ -1 +0,0 @@\n-x\n'],
    ['a swap', 'a\nb\nc\n', 'c\nb\na\n', '--- f\n+++ f\n@@ -1,3 +1,3 @@\n-a\n-b\n c\n+b\n+a\n'],
    ['two far changes: two hunks', '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n', 'X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n', '--- f\n+++ f\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n'],
    ['two near changes: one hunk', '1\n2\n3\n4\n5\n', '1\nA\n3\nB\n5\n', '--- f\n+++ f\n@@ -1,5 +1,5 @@\n 1\n-2\n+A\n 3\n-4\n+B\n 5\n'],
  ] as const)('%s', (_name, before, after, expected) => {
    expect(unifiedDiff('f', before, after)).toBe(expected);
  });

  it('a large rewrite stays bounded (all removed, all added)', () => {
    const before = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 3000 }, (_, i) => `new ${i}`).join('\n');
    const diff = unifiedDiff('f', before, after);
    expect(diff.split('\n').filter((l) => l.startsWith('-old')).length).toBe(3000);
    expect(diff.split('\n').filter((l) => l.startsWith('+new')).length).toBe(3000);
  });
});

describe('the decision JSON each host documents', () => {
  const request = (id: 'claude-code' | 'codex', event: 'PreToolUse' | 'PermissionRequest', suggestions: Record<string, unknown>[] = []): PermissionRequest => ({
    kind: 'permission',
    message: 'x',
    host: id,
    hostName: host(id).name,
    event,
    tool: 'Bash',
    input: { command: 'touch a' },
    command: 'touch a',
    cwd: '/w',
    sessionId: 's',
    editable: host(id).editable(event),
    suggestions,
    timeoutSeconds: 110,
  });
  const allow: PermissionResult = { behavior: 'allow', decidedVia: 'extension' };
  const edited: PermissionResult = { behavior: 'allow', decidedVia: 'extension', updatedInput: { command: 'touch b' } };
  const deny: PermissionResult = { behavior: 'deny', decidedVia: 'extension', message: 'not on main' };
  const denyByRule: PermissionResult = { behavior: 'deny', decidedVia: 'rule', ruleId: 'rule_0123456789abcdef' };

  it.each([
    ['claude-code', 'PreToolUse', allow, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed by the person in Elicitly' } }],
    ['claude-code', 'PreToolUse', edited, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed by the person in Elicitly', updatedInput: { command: 'touch b' } } }],
    ['claude-code', 'PreToolUse', deny, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not on main' } }],
    ['claude-code', 'PermissionRequest', allow, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }],
    ['claude-code', 'PermissionRequest', edited, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow', updatedInput: { command: 'touch b' } } } }],
    ['claude-code', 'PermissionRequest', deny, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not on main' } } }],
    ['claude-code', 'PermissionRequest', denyByRule, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied by a rule in Elicitly (rule_0123456789abcdef)' } } }],
    ['codex', 'PreToolUse', allow, null],
    ['codex', 'PreToolUse', edited, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed by the person in Elicitly', updatedInput: { command: 'touch b' } } }],
    ['codex', 'PreToolUse', deny, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not on main' } }],
    ['codex', 'PermissionRequest', allow, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }],
    ['codex', 'PermissionRequest', deny, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not on main' } } }],
  ] as const)('%s %s %j', (id, event, result, expected) => {
    expect(permissionOutput(request(id, event), result)).toEqual(expected);
  });

  it('Codex PermissionRequest never carries an edited input (it fails closed on one)', () => {
    expect(permissionOutput(request('codex', 'PermissionRequest'), edited)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  });

  it('always allow in this session: Claude Code gets its own suggestions, narrowed to the session', () => {
    const suggestions = [
      { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'localSettings' },
      { type: 'setMode', mode: 'acceptEdits', destination: 'localSettings' },
    ];
    expect(permissionOutput(request('claude-code', 'PermissionRequest', suggestions), { ...allow, ruleId: 'rule_0123456789abcdef' }, true)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'allow', updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'session' }] },
      },
    });
    // Not chosen for the session: nothing added to the host's own rules.
    expect(permissionOutput(request('claude-code', 'PermissionRequest', suggestions), allow, false)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    const session = [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'npm test' }], behavior: 'allow', destination: 'session' }];
    expect(sessionPermissions([...suggestions, ...session])).toEqual(session);
  });

  it.each([
    [{ action: 'accept', content: { env: 'prod' }, via: 'extension' }, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: { env: 'prod' } } }],
    [{ action: 'decline', content: null, via: 'extension' }, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } }],
  ] as const)('Elicitation %j', (result, expected) => {
    expect(elicitationOutput(result)).toEqual(expected);
  });
});
