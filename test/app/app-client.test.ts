import { describe, expect, it, vi } from 'vitest';
import { createAppClient, newIdempotencyKey } from '../../app/app-client.js';
import type { Decision } from '../../kit/messages.js';
import { IdempotencyKeySchema } from '../../shared/wire-fields.js';
import { ID, TOKEN, fakeHost, northmarkView, structured } from './app-helpers.js';

const approve: Decision = { elicitationId: ID, decision: 'approved', values: { name: 'NorthMark' }, included: ['name'] };

function setup(...decides: Parameters<typeof fakeHost>[1][]) {
  const fake = fakeHost({ view: northmarkView() }, ...decides);
  const refresh = vi.fn(() => Promise.resolve());
  const onEnded = vi.fn();
  const client = createAppClient(fake.host, TOKEN, { refresh, onEnded });
  return { ...fake, client, refresh, onEnded };
}

describe('app client: decisions over elicit_app_decide', () => {
  it('sends the decision with the key and a fresh idempotency key, and maps the answer', async () => {
    const { client, decidesOf, onEnded } = setup();
    expect(await client.decide(approve)).toEqual({ state: 'answered', ok: true, status: 'approved' });
    const [sent] = decidesOf();
    expect(sent).toMatchObject({ ...approve, token: TOKEN });
    expect(IdempotencyKeySchema.safeParse(sent?.idempotencyKey).success).toBe(true);
    expect(onEnded).toHaveBeenCalledWith({ decidedHere: true });
  });

  it('mints a new key for every decision that got an answer', async () => {
    const issues = [{ path: 'values.name', rule: 'minLength', message: 'values.name: too short' }];
    const { client, decidesOf, onEnded } = setup(structured({ error: { code: 'invalid', field: 'values.name', message: 'values.name: too short' }, issues }, true));
    expect(await client.decide(approve)).toEqual({ state: 'answered', ok: false, reason: 'invalid', issues });
    expect(onEnded).not.toHaveBeenCalled();
    await client.decide(approve);
    const [a, b] = decidesOf();
    expect(a?.idempotencyKey).not.toBe(b?.idempotencyKey);
  });

  it('keeps the key for a retry of the same decision after a transport error, not for another decision', async () => {
    const { client, decidesOf } = setup(new Error('host went away'), new Error('again'));
    const first = await client.decide(approve);
    expect(first.state).toBe('error');
    expect(first.state === 'error' && first.message).toContain('host went away');
    await client.decide(approve);
    await client.decide({ ...approve, values: { name: 'Other' } });
    const [a, b, c] = decidesOf();
    expect(b?.idempotencyKey).toBe(a?.idempotencyKey);
    expect(c?.idempotencyKey).not.toBe(a?.idempotencyKey);
  });

  it('says who decided first when the other surface was first, and ends the review', async () => {
    const decided = { via: 'extension' as const, at: 1_700_000_000_000 };
    const { client, onEnded } = setup(structured({ error: { code: 'already_decided', field: 'elicitationId', message: 'already decided' }, decided }, true));
    expect(await client.decide(approve)).toEqual({ state: 'answered', ok: false, reason: 'already_decided' });
    expect(onEnded).toHaveBeenCalledWith({ decidedHere: false, decided });
  });

  it.each([
    ['expired', true], ['withdrawn', true], ['not_found', true], ['shown_mismatch', false], ['passkey_required', false],
  ] as const)('reads a %s refusal as the engine\'s answer (final: %s), as the extension does', async (code, final) => {
    const { client, onEnded } = setup(structured({ error: { code, field: 'elicitationId', message: code } }, true));
    expect(await client.decide(approve)).toEqual({ state: 'answered', ok: false, reason: code });
    expect(onEnded).toHaveBeenCalledTimes(final ? 1 : 0);
  });

  it('a decision taken ends the review as decided here; a refusal without isError is not read as one', async () => {
    const taken = setup(structured({ ok: true, status: 'approved' }));
    expect(await taken.client.decide(approve)).toEqual({ state: 'answered', ok: true, status: 'approved' });
    expect(taken.onEnded).toHaveBeenCalledWith({ decidedHere: true });
    const unmarked = setup(structured({ ok: false, reason: 'invalid' }));
    expect((await unmarked.client.decide(approve)).state).toBe('error');
  });

  it.each([
    ['token_missing', 'did not pass this review\'s key'],
    ['token_invalid', 'did not accept this review\'s key'],
    ['token_spent', 'already used by a decision made here'],
  ] as const)('turns a %s refusal into an error naming it', async (code, words) => {
    const { client, onEnded } = setup(structured({ error: { code, field: 'token', message: `token: ${code}` } }, true));
    const reply = await client.decide(approve);
    expect(reply.state).toBe('error');
    if (reply.state !== 'error') return;
    expect(reply.message).toContain(words);
    expect(reply.message).toContain(`${code}: token: ${code}`);
    expect(onEnded).toHaveBeenCalledTimes(code === 'token_spent' ? 1 : 0);
  });

  it('shows the text of an error the SDK raised before the tool ran', async () => {
    const { client } = setup({ isError: true, content: [{ type: 'text', text: 'MCP error -32602: Input validation error' }] });
    expect(await client.decide(approve)).toEqual({ state: 'error', message: 'MCP error -32602: Input validation error' });
  });

  it('refuses an answer it cannot read rather than trusting it', async () => {
    const { client } = setup(structured({ ok: 'yes' }));
    expect((await client.decide(approve)).state).toBe('error');
  });

  it('reconnect() reads the request again', async () => {
    const { client, refresh } = setup();
    await client.reconnect();
    expect(refresh).toHaveBeenCalledTimes(1);
  });
});

describe('newIdempotencyKey', () => {
  it('makes a UUID even where crypto.randomUUID is missing (not a secure context)', () => {
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const key = newIdempotencyKey();
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(newIdempotencyKey()).not.toBe(key);
    } finally {
      Reflect.deleteProperty(crypto, 'randomUUID');
    }
  });
});
