// Issue 35, part 1: what a pushed notification says and offers. Actions only when the whole question is on it.
import { describe, expect, it } from 'vitest';
import { MAX_PLAINTEXT } from '../../server/remote/web-push.js';
import { PushPayloadSchema, pushEndpointProblem, pushNotice } from '../../shared/push-notice.js';
import type { RequestView, ReviewRequest } from '../../shared/review-request.js';
import { bashPermission } from '../fixtures/permission.js';

const HASH = 'a'.repeat(64);
const NOW = Date.UTC(2026, 11, 5, 12);

function view(request: ReviewRequest, overrides: Partial<RequestView> = {}): RequestView {
  return {
    elicitationId: 'el_1',
    kind: request.kind,
    status: 'pending',
    message: request.message,
    createdAt: NOW,
    expiresAt: NOW + 30 * 60_000,
    requester: { client: 'Claude Code', pid: 1 },
    request,
    renderedTemplate: null,
    ...overrides,
  };
}

const approval = (context: unknown, message = 'Deploy build 812?'): ReviewRequest => ({ kind: 'approval', mode: 'json', message, context, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Decline' }, timeoutSeconds: 1800 });
const confirm = (message: string): ReviewRequest => ({ kind: 'confirm', message, labels: { yes: 'Yes', no: 'No' }, timeoutSeconds: 600 });

describe('pushNotice: actions only for what fits, whole, on a notification', () => {
  const cases: { name: string; request: ReviewRequest; overrides?: Partial<RequestView>; body: string; actions: string[] }[] = [
    { name: 'a confirm', request: confirm('Run the migration now?'), body: 'Run the migration now?', actions: ['Yes', 'No'] },
    { name: 'a json approval with a flat context', request: approval({ build: 812, target: 'staging' }), body: 'Deploy build 812?\nbuild: 812\ntarget: staging', actions: ['Approve', 'Decline'] },
    { name: 'a json approval with no context', request: approval(null), body: 'Deploy build 812?', actions: ['Approve', 'Decline'] },
    { name: 'a permission prompt for a command', request: bashPermission('npm test'), body: 'Claude Code wants to run a command\nBash\n$ npm test', actions: ['Allow', 'Deny'] },
    { name: 'a nested context', request: approval({ build: { id: 812 } }), body: 'Deploy build 812?', actions: [] },
    { name: 'an approval with a form', request: { ...approval(null), mode: 'form', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } as ReviewRequest, body: 'Deploy build 812?', actions: [] },
    { name: 'an approval shown through a template', request: approval({ a: 1 }), overrides: { renderedTemplate: '<p>a</p>' }, body: 'Deploy build 812?', actions: [] },
    { name: 'an edit (a diff)', request: bashPermission('x', { command: undefined, tool: 'Edit', diff: '--- a\n+++ b\n', path: '/r/a.ts' }), body: 'Claude Code wants to run a command', actions: [] },
    { name: 'a form', request: { kind: 'form', message: 'Your name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } }, timeoutSeconds: 60 } as ReviewRequest, body: 'Your name?', actions: [] },
    { name: 'a request that needs a passkey', request: confirm('Wire the money?'), overrides: { assurance: 'passkey' }, body: 'Wire the money?', actions: [] },
    { name: 'a question with a bidi override (it would not read as sent)', request: confirm('Delete \u202eelif.txt?'), body: 'Delete elif.txt?', actions: [] },
    { name: 'a context over six lines', request: approval({ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }), body: 'Deploy build 812?\na: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6', actions: [] },
    { name: 'a label too long for a button', request: { ...confirm('Go?'), labels: { yes: 'Yes, and do it with everything it takes', no: 'No' } } as ReviewRequest, body: 'Go?', actions: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const payload = pushNotice(view(c.request, c.overrides), 'request.waiting', HASH, NOW);
      expect(payload.body).toBe(c.body);
      expect(payload.actions.map((a) => a.title)).toEqual(c.actions);
      expect(PushPayloadSchema.parse(payload)).toEqual(payload);
    });
  }

  it('the actions carry the decision the review would send: confirm yes/no as answers, approvals and prompts as approve/reject', () => {
    expect(pushNotice(view(confirm('Go?')), 'request.waiting', HASH, NOW).actions.map((a) => a.decision)).toEqual([
      { decision: 'approved', values: { confirmed: true } },
      { decision: 'approved', values: { confirmed: false } },
    ]);
    expect(pushNotice(view(bashPermission('ls')), 'request.waiting', HASH, NOW).actions.map((a) => a.decision)).toEqual([{ decision: 'approved' }, { decision: 'rejected' }]);
  });

  it('a question too long for a notification is clipped and gets no actions; the title names the agent, cleaned', () => {
    const payload = pushNotice(view(confirm('x'.repeat(500)), { requester: { client: 'Evil\u202e\nAgent', pid: 1 } }), 'request.reminder', HASH, NOW);
    expect(payload.actions).toEqual([]);
    expect(Array.from(payload.body)).toHaveLength(240);
    expect(payload.body.endsWith('…')).toBe(true);
    expect(payload.title).toBe('Still waiting: question from Evil Agent');
    expect(pushNotice(view(bashPermission('ls')), 'request.expiring', HASH, NOW + 25 * 60_000).title).toBe('Expires in 5 min: permission from Claude Code');
    expect(pushNotice(view(approval(null)), 'request.waiting', HASH, NOW).title).toBe('Approval from Claude Code');
  });

  it('the largest payload still fits one push message', () => {
    const wide = '"\u{1F600}'.repeat(400);
    const payload = pushNotice(view(confirm(wide), { requester: { client: wide, pid: 1 } }), 'request.expiring', HASH, NOW);
    expect(new TextEncoder().encode(JSON.stringify(payload)).length).toBeLessThanOrEqual(MAX_PLAINTEXT);
  });
});

describe('pushEndpointProblem: the hub posts only to push services', () => {
  it.each([
    ['https://fcm.googleapis.com/fcm/send/abc', [], null],
    ['https://updates.push.services.mozilla.com/wpush/v2/abc', [], null],
    ['https://web.push.apple.com/QGx', [], null],
    ['https://wns2-par02p.notify.windows.com/w/?token=x', [], null],
    ['http://fcm.googleapis.com/fcm/send/abc', [], 'must be https://'],
    ['https://fcm.googleapis.com.evil.example/x', [], /push service/],
    ['https://192.168.1.1/admin', [], /push service/],
    ['http://127.0.0.1:9999/push/1', ['http://127.0.0.1:9999'], null],
    ['http://127.0.0.1:9998/push/1', ['http://127.0.0.1:9999'], 'must be https://'],
    ['not a url', [], 'must be a URL'],
  ] as const)('%s with %j', (endpoint, extra, expected) => {
    const problem = pushEndpointProblem(endpoint, extra);
    if (expected === null) expect(problem).toBeNull();
    else if (typeof expected === 'string') expect(problem).toBe(expected);
    else expect(problem).toMatch(expected);
  });
});
