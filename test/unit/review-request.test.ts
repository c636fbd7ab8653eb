import { describe, expect, it } from 'vitest';
import { checkApprovalInput, checkProposalInput } from '../../shared/approval-input.js';
import { parseReviewRequest } from '../../shared/review-request.js';
import { northmarkProposal } from '../fixtures/northmark.js';

function stored<T extends { ok: boolean }>(checked: T): Record<string, unknown> {
  if (!('request' in checked)) throw new Error('fixture invalid');
  return checked.request as Record<string, unknown>;
}

describe('parseReviewRequest (the extension re-checks what it renders)', () => {
  it('accepts the normalized proposal the server stores, unchanged', () => {
    const request = stored(checkProposalInput(northmarkProposal));
    expect(parseReviewRequest(request)).toEqual({ ok: true, request });
  });

  it.each([
    ['json', { message: 'Deploy?', context: { env: 'prod' } }],
    ['form', { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } }],
    ['both', { message: 'Both', context: [1], requestedSchema: { type: 'object', properties: { n: { type: 'boolean' } } }, labels: { ok: 'Ship' } }],
  ])('accepts a normalized %s-mode approval unchanged', (_mode, input) => {
    const request = stored(checkApprovalInput(input));
    expect(parseReviewRequest(request)).toEqual({ ok: true, request });
  });

  it.each([
    ['not an object', 'hello', '(request)'],
    ['unknown kind', { kind: 'survey', message: 'x' }, 'kind'],
    ['proposal with a broken schema', { ...stored(checkProposalInput(northmarkProposal)), requestedSchema: { type: 'object', properties: {} } }, 'requestedSchema.properties'],
    ['proposal with a field outside the schema', { ...stored(checkProposalInput(northmarkProposal)), fields: { ghost: { sources: {} } } }, 'fields.ghost'],
    ['approval without message', { kind: 'approval', mode: 'json', context: {}, requestedSchema: null, labels: { ok: 'a', cancel: 'b' }, timeoutSeconds: 60 }, 'message'],
  ])('refuses %s, naming %s', (_name, raw, path) => {
    const parsed = parseReviewRequest(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.map((i) => i.path)).toContain(path);
  });
});
