import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../shared/lifecycle.js';
import { PermissionRequestSchema, checkPermissionValues, permissionResult, type PermissionRequest } from '../../shared/permission.js';
import { checkAnswer, resultEnvelope } from '../../shared/review-request.js';

function request(over: Partial<PermissionRequest> = {}): PermissionRequest {
  return PermissionRequestSchema.parse({
    kind: 'permission',
    message: 'Claude Code wants to run a command',
    host: 'claude-code',
    event: 'PermissionRequest',
    tool: 'Bash',
    input: { command: 'npm test', description: 'run the tests' },
    command: 'npm test',
    cwd: '/repo',
    sessionId: 's-1',
    editable: true,
    suggestions: [],
    timeoutSeconds: 110,
    ...over,
  });
}

const edit = (editable: boolean) => request({ tool: 'Edit', command: undefined, input: { file_path: '/repo/a.ts' }, path: '/repo/a.ts', editable });

describe('checkPermissionValues: the only answer is updatedInput, and only where the host runs it', () => {
  it.each([
    ['nothing', request(), undefined, { ok: true, values: {} }],
    ['an empty object', request(), {}, { ok: true, values: {} }],
    ['an edited command', request(), { updatedInput: { command: 'npm test -- --ci' } }, { ok: true, values: { updatedInput: { command: 'npm test -- --ci' } } }],
    ['an edited edit', edit(true), { updatedInput: { file_path: '/repo/b.ts' } }, { ok: true, values: { updatedInput: { file_path: '/repo/b.ts' } } }],
  ] as const)('%s is accepted', (_what, req, values, expected) => {
    expect(checkPermissionValues(req, values)).toEqual(expected);
  });

  it.each([
    ['values that are not an object', request(), 'yes', 'values', 'not_object'],
    ['an unknown key', request(), { confirmed: true }, 'values.confirmed', 'unknown_field'],
    ['updatedInput where the host runs none', request({ editable: false }), { updatedInput: { command: 'ls' } }, 'values.updatedInput', 'not_editable'],
    ['updatedInput that is not an object', request(), { updatedInput: 'ls' }, 'values.updatedInput', 'not_object'],
    ['a shell input without its command', request(), { updatedInput: { description: 'x' } }, 'values.updatedInput.command', 'required'],
    ['a shell input with an empty command', request(), { updatedInput: { command: '   ' } }, 'values.updatedInput.command', 'required'],
    ['a shell input with a command that is not a string', request(), { updatedInput: { command: ['rm'] } }, 'values.updatedInput.command', 'required'],
    ['an edit where the host runs none', edit(false), { updatedInput: { file_path: '/x' } }, 'values.updatedInput', 'not_editable'],
  ] as const)('%s is refused, naming the field', (_what, req, values, path, rule) => {
    const checked = checkPermissionValues(req, values);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.issues).toContainEqual(expect.objectContaining({ path, rule }));
  });

  it('checkAnswer sends a permission request to it', () => {
    expect(checkAnswer(request({ editable: false }), { updatedInput: { command: 'ls' } }).ok).toBe(false);
  });
});

describe('permissionResult: what the hook reads back', () => {
  const outcome = (over: Partial<Outcome>): Outcome => ({ decision: 'approved', action: 'submit', idempotencyKey: 'k', ...over });
  it.each([
    ['an allow', outcome({ decidedVia: 'extension', values: {} }), { behavior: 'allow', decidedVia: 'extension' }],
    ['an allow with edited input', outcome({ decidedVia: 'app', values: { updatedInput: { command: 'ls' } } }), { behavior: 'allow', updatedInput: { command: 'ls' }, decidedVia: 'app' }],
    ['a deny with the reason', outcome({ decision: 'rejected', action: 'cancel', comment: 'not on main', decidedVia: 'extension' }), { behavior: 'deny', message: 'not on main', decidedVia: 'extension' }],
    ['a rule', outcome({ decidedVia: 'rule', ruleId: 'rule_0123456789abcdef', values: {} }), { behavior: 'allow', decidedVia: 'rule', ruleId: 'rule_0123456789abcdef' }],
    ['a record from before decidedVia', outcome({ values: {} }), { behavior: 'allow', decidedVia: 'extension' }],
  ] as const)('%s', (_what, o, expected) => {
    expect(permissionResult(o)).toEqual(expected);
    expect(resultEnvelope(request(), o)).toEqual(expected);
  });

  it('a deny never carries an edited input', () => {
    expect(permissionResult(outcome({ decision: 'rejected', action: 'cancel', values: { updatedInput: { command: 'ls' } } }))).toEqual({ behavior: 'deny', decidedVia: 'extension' });
  });
});
