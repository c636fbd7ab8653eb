// A decision that needs the person's passkey (issue 34, part 4), through the real engine, its passkeys file and its
// ledger, with an authenticator in node:crypto: registered over a one-time nonce, a decision refused without an
// assertion, refused when its values changed after the assertion, refused when replayed on another request, and a
// receipt that `audit verify --receipt` checks offline with the key the ledger recorded.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { keyIdOf } from '../../server/ledger/ledger-format.js';
import { ledgerKey } from '../../server/ledger/ledger-key.js';
import { verifyReceipt } from '../../server/ledger/ledger-verify.js';
import { requestHashOf } from '../../server/ledger/request-events.js';
import { PASSKEYS_FILE } from '../../server/passkeys/passkey-registry.js';
import { NO_PUSH } from '../helpers/hub-fakes.js';
import { serviceHandlers } from '../../server/hub/hub-service.js';
import { firefoxWebAuthnOrigin } from '../../server/passkeys/passkey-origins.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { EXTENSION_ORIGIN, FIREFOX_EXTENSION_ID } from '../../shared/extension-id.js';
import { decisionChallenge, decisionCore, decisionHash, manageChallenge } from '../../shared/passkey.js';
import { ReceiptSchema } from '../../shared/receipt.js';
import type { DecideParams } from '../../shared/wire-fields.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort } from '../helpers/scripted-extension.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

let dir: string;
let engine: ApprovalEngine;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-passkey-'));
  engine = await open();
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = () => ApprovalEngine.open({ dir, retentionMs: 86_400_000, ledgerCheckpoint: { every: 2, ms: 60_000 } });
const hub = () => keyIdOf(ledgerKey(dir).publicKey);

function approval(id: string) {
  const checked = checkApprovalInput({ message: `Deploy ${id}?`, requestedSchema: { type: 'object', properties: { replicas: { type: 'integer' } }, required: ['replicas'] } });
  if (!checked.ok) throw new Error('fixture invalid');
  return checked.request;
}

async function create(id: string, assurance?: 'passkey') {
  return engine.call('create', { id, request: approval(id), renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'test', pid: 1 }, ...(assurance ? { assurance } : {}) }, null);
}

/** Registers a passkey from the Chrome extension's origin, as its Settings page does. */
async function register(label = 'laptop', proofBy?: SoftAuthenticator) {
  const authenticator = new SoftAuthenticator(EXTENSION_ORIGIN, EXTENSION_ORIGIN);
  const { nonce } = engine.passkeys.nonce();
  const registration = authenticator.register(nonce);
  const proof = proofBy?.assert(manageChallenge({ hub: hub(), nonce, change: { add: registration.id } }));
  const answer = await engine.passkeys.register(EXTENSION_ORIGIN, { nonce, registration, label, ...(proof ? { proof } : {}) });
  return { authenticator, answer };
}

/** The decision as the extension sends it: the assertion's challenge derived from exactly what it sends. */
function signed(authenticator: SoftAuthenticator, id: string, decision: Omit<DecideParams, 'elicitationId' | 'idempotencyKey'>, signedAs = decision): DecideParams {
  const record = engine.pendingViews().find((v) => v.elicitationId === id);
  if (!record) throw new Error(`${id} is not pending`);
  const core = decisionCore(record.request, signedAs);
  if (!core.ok) throw new Error('the signed decision is invalid');
  const challenge = decisionChallenge({ hub: hub(), requestId: id, requestHash: requestHashOf(record), decisionHash: decisionHash(core.core) });
  return { elicitationId: id, idempotencyKey: `k-${id}-${Math.random()}`, ...decision, passkey: authenticator.assert(challenge) };
}

describe('a request that needs a passkey', () => {
  it('is refused at creation while the person has no passkey, naming the field', async () => {
    const created = await create('el_none', 'passkey');
    expect(created.ok).toBe(false);
    if (!created.ok) expect(created.error.message).toMatch(/^assurance: .*no passkey/);
  });

  it('is decided only with an assertion over exactly the values sent; the receipt carries it and verifies offline', async () => {
    const { authenticator, answer } = await register();
    expect(answer.ok).toBe(true);
    // The passkeys file is the person's: 0600, like the install key.
    expect(statSync(join(dir, PASSKEYS_FILE)).mode & 0o777).toBe(0o600);
    expect((await create('el_1', 'passkey')).ok).toBe(true);
    expect(engine.pendingViews().find((v) => v.elicitationId === 'el_1')?.assurance).toBe('passkey');

    const bare = await engine.decide({ elicitationId: 'el_1', idempotencyKey: 'k0', decision: 'approved', values: { replicas: 3 } }, 'extension');
    expect(bare).toMatchObject({ ok: true, value: { ok: false, reason: 'passkey_required', issues: [{ path: 'passkey' }] } });

    // Signed for 3 replicas, sent with 30: the hub recomputes the challenge from what it would record.
    const changed = await engine.decide(signed(authenticator, 'el_1', { decision: 'approved', values: { replicas: 30 } }, { decision: 'approved', values: { replicas: 3 } }), 'extension');
    expect(changed).toMatchObject({ ok: true, value: { ok: false, reason: 'passkey_invalid', issues: [{ path: 'passkey', rule: 'challenge_mismatch' }] } });

    // A person who did not unlock the authenticator (no user verification) decides nothing either.
    const unverified = signed(authenticator, 'el_1', { decision: 'approved', values: { replicas: 3 } });
    const record = engine.pendingViews().find((v) => v.elicitationId === 'el_1');
    if (!record) throw new Error('not pending');
    const core = decisionCore(record.request, { decision: 'approved', values: { replicas: 3 } });
    if (!core.ok) throw new Error('invalid');
    unverified.passkey = authenticator.assert(decisionChallenge({ hub: hub(), requestId: 'el_1', requestHash: requestHashOf(record), decisionHash: decisionHash(core.core) }), { userVerified: false });
    expect(await engine.decide(unverified, 'extension')).toMatchObject({ ok: true, value: { ok: false, reason: 'passkey_invalid' } });

    // The chat's review cannot hold a passkey ceremony: it is told where to decide.
    const inApp = await engine.decide({ elicitationId: 'el_1', idempotencyKey: 'k-app', decision: 'rejected' }, 'app');
    expect(inApp).toMatchObject({ ok: true, value: { ok: false, reason: 'passkey_required', issues: [{ message: expect.stringMatching(/browser extension/) }] } });

    const good = signed(authenticator, 'el_1', { decision: 'approved', values: { replicas: 3 } });
    expect(await engine.decide(good, 'extension')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
    // The same decision sent again (the outbox after a lost answer) is the same success, not a replay refusal.
    expect(await engine.decide(good, 'extension')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });

    const result = await engine.call('result', { id: 'el_1' }, null);
    if (!result.ok || !('receipt' in result.value)) throw new Error('no receipt');
    const receipt = ReceiptSchema.parse(result.value.receipt);
    expect(receipt.passkey).toMatchObject({ credentialId: authenticator.id, rpId: EXTENSION_ORIGIN, origin: EXTENSION_ORIGIN, requestId: 'el_1', hub: hub() });
    await engine.close();

    // Offline: the chain, the checkpoint, and the assertion against the public key the ledger recorded at registration.
    const publicKey = ledgerKey(dir).publicKey;
    expect((await verifyReceipt(dir, publicKey, receipt)).problem).toBeNull();
    expect((await verifyReceipt(dir, publicKey, receipt, authenticator.spki)).ok).toBe(true);
    // Another passkey's key, or a receipt whose assertion was swapped for one over other values: named.
    expect((await verifyReceipt(dir, publicKey, receipt, new SoftAuthenticator(EXTENSION_ORIGIN, EXTENSION_ORIGIN).spki)).problem).toMatch(/signature does not verify/);
    const other = { ...receipt, passkey: { ...receipt.passkey!, clientDataJSON: changed.ok && !changed.value.ok ? Buffer.from('{}').toString('base64url') : '' } };
    expect((await verifyReceipt(dir, publicKey, other)).problem).toMatch(/does not record the passkey assertion/);
    engine = await open();
  });

  it('an assertion made for one request is refused on another with the same decision', async () => {
    const { authenticator } = await register();
    await create('el_a', 'passkey');
    await create('el_b', 'passkey');
    const forA = signed(authenticator, 'el_a', { decision: 'rejected' });
    const replayed = await engine.decide({ ...forA, elicitationId: 'el_b', idempotencyKey: 'k-b' }, 'extension');
    expect(replayed).toMatchObject({ ok: true, value: { ok: false, reason: 'passkey_invalid', issues: [{ rule: 'challenge_mismatch' }] } });
    expect(await engine.decide(forA, 'extension')).toMatchObject({ ok: true, value: { ok: true, status: 'rejected' } });
  });

  it("the person's setting makes a request need one, and no rule answers it", async () => {
    const { authenticator } = await register();
    expect(await engine.passkeys.setRequire({ kind: 'surface', origin: EXTENSION_ORIGIN }, { require: ['proposal', 'everything'] })).toEqual({ ok: true });
    expect((await create('el_setting')).ok).toBe(true);
    expect(engine.pendingViews().find((v) => v.elicitationId === 'el_setting')?.assurance).toBe('passkey');
    // Loosening it from a page needs a passkey; from the terminal (a lost passkey) it does not.
    expect(await engine.passkeys.setRequire({ kind: 'surface', origin: EXTENSION_ORIGIN }, { require: [] })).toMatchObject({ ok: false, code: 'passkey_required' });
    const { nonce } = engine.passkeys.nonce();
    const proof = authenticator.assert(manageChallenge({ hub: hub(), nonce, change: { require: ['proposal'] } }));
    expect(await engine.passkeys.setRequire({ kind: 'surface', origin: EXTENSION_ORIGIN }, { require: ['proposal'], nonce, proof })).toEqual({ ok: true });
    expect(engine.passkeys.require()).toEqual(['proposal']);
    expect(await engine.passkeys.setRequire({ kind: 'terminal' }, { require: [] })).toEqual({ ok: true });
  });

  it('a second passkey needs the first one; removal from a page needs one; the ledger keeps every change', async () => {
    const first = await register('laptop');
    expect(first.answer.ok).toBe(true);
    const unapproved = await register('thief');
    expect(unapproved.answer).toMatchObject({ ok: false, code: 'passkey_required' });
    const second = await register('phone', first.authenticator);
    expect(second.answer.ok).toBe(true);
    expect(engine.passkeys.info(EXTENSION_ORIGIN).passkeys.map((p) => p.label)).toEqual(['laptop', 'phone']);

    expect(await engine.passkeys.remove({ kind: 'surface', origin: EXTENSION_ORIGIN }, { id: first.authenticator.id })).toMatchObject({ ok: false, code: 'passkey_required' });
    const { nonce } = engine.passkeys.nonce();
    const proof = second.authenticator.assert(manageChallenge({ hub: hub(), nonce, change: { remove: first.authenticator.id } }));
    expect(await engine.passkeys.remove({ kind: 'surface', origin: EXTENSION_ORIGIN }, { id: first.authenticator.id, nonce, proof })).toEqual({ ok: true, removed: true });
    // The nonce was spent: the same proof again is refused.
    expect(await engine.passkeys.remove({ kind: 'surface', origin: EXTENSION_ORIGIN }, { id: second.authenticator.id, nonce, proof })).toMatchObject({ ok: false, code: 'invalid', issues: [{ path: 'nonce' }] });
    expect(await engine.passkeys.remove({ kind: 'terminal' }, { id: second.authenticator.id })).toEqual({ ok: true, removed: true });
    await engine.close();
    const types = readFileSync(join(dir, 'ledger', 'segment-000001.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { event: { type: string } }).event.type).filter((t) => t.startsWith('passkey.'));
    expect(types).toEqual(['passkey.added', 'passkey.added', 'passkey.removed', 'passkey.removed']);
    engine = await open();
    expect(engine.passkeys.credentials()).toEqual([]);
  });
});

describe("the setting 'rules': a rule is saved only with a passkey's approval", () => {
  it('a save needs an assertion over exactly that rule; ending one does not; a decision cannot carry one', async () => {
    const { authenticator } = await register();
    const service = serviceHandlers(engine, { connected: () => 1, lastSeenAt: () => null, paired: () => 1, devices: () => 0, reviewerOf: () => undefined, team: () => false }, NO_PUSH);
    const context = { principal: { role: 'extension' as const, keyId: 'k_0123456789abcdef', origin: EXTENSION_ORIGIN }, caller: 'extension' as const };
    const draft = { effect: 'allow' as const, match: { tool: 'Bash', commandPrefix: 'npm test' }, expiresAt: null };
    // Without the setting a rule saves as before.
    const plain = await service['rule.save']({ rule: draft }, context);
    expect(plain).toMatchObject({ ok: true, value: { ok: true } });
    expect(await engine.passkeys.setRequire({ kind: 'terminal' }, { require: ['rules'] })).toEqual({ ok: true });

    const other = { ...draft, match: { tool: 'Bash', commandPrefix: 'npm run build' } };
    expect(await service['rule.save']({ rule: other }, context)).toMatchObject({ ok: true, value: { ok: false, issues: [{ path: 'proof', rule: 'passkey_required' }] } });
    // Approved for one rule, sent with another: refused.
    const { nonce } = engine.passkeys.nonce();
    const proof = authenticator.assert(manageChallenge({ hub: hub(), nonce, change: { rule: { id: null, draft: other } } }));
    const swapped = { ...other, match: { tool: 'Bash', commandPrefix: 'rm' } };
    expect(await service['rule.save']({ rule: swapped, nonce, proof }, context)).toMatchObject({ ok: true, value: { ok: false, issues: [{ rule: 'challenge_mismatch' }] } });
    const second = engine.passkeys.nonce().nonce;
    const approved = authenticator.assert(manageChallenge({ hub: hub(), nonce: second, change: { rule: { id: null, draft: other } } }));
    expect(await service['rule.save']({ rule: other, nonce: second, proof: approved }, context)).toMatchObject({ ok: true, value: { ok: true } });
    expect(engine.ruleList().map((r) => r.match.commandPrefix)).toEqual(['npm test', 'npm run build']);

    // "End now" only brings the questions back: no passkey asked.
    const first = engine.ruleList()[0];
    if (!first || !plain.ok) throw new Error('no rule');
    expect(await service['rule.save']({ id: first.id, rule: { ...draft, expiresAt: Date.now() } }, context)).toMatchObject({ ok: true, value: { ok: true } });

    // A decision's "Always allow…" would save a rule without one: refused, and nothing is decided.
    const checked = checkApprovalInput({ message: 'x', context: {} });
    if (!checked.ok) throw new Error('fixture');
    const request = { kind: 'permission' as const, message: 'Run npm ci?', host: 'claude-code' as const, event: 'PermissionRequest' as const, tool: 'Bash', input: { command: 'npm ci' }, command: 'npm ci', cwd: '/p', sessionId: 's', editable: false, suggestions: [], timeoutSeconds: 60 };
    expect((await engine.call('create', { id: 'el_perm', request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null)).ok).toBe(true);
    const withRule = await engine.decide({ elicitationId: 'el_perm', idempotencyKey: 'k', decision: 'approved', values: {}, rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm ci' }, expiresAt: null } }, 'extension');
    expect(withRule).toMatchObject({ ok: true, value: { ok: false, reason: 'invalid', issues: [{ path: 'rule', rule: 'passkey_required' }] } });
    expect(engine.pendingViews().some((v) => v.elicitationId === 'el_perm')).toBe(true);
  });
});

describe('elicitly-companion passkey (the terminal: where a lost passkey is removed)', () => {
  it('lists the passkeys with their fingerprints, removes a lost one without a passkey, and the setting goes with the last', async () => {
    const { authenticator } = await register('lost laptop');
    expect(await engine.passkeys.setRequire({ kind: 'terminal' }, { require: ['permission'] })).toEqual({ ok: true });
    await engine.close();
    const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()) };
    const listed = await runCommand(process.execPath, [SERVER_ENTRY, 'passkey', '--list', '--json'], { env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ require: ['permission'], passkeys: [expect.objectContaining({ id: authenticator.id, label: 'lost laptop', fingerprint: createHash('sha256').update(Buffer.from(authenticator.spki, 'base64url')).digest('hex') })] });
    const bad = await runCommand(process.execPath, [SERVER_ENTRY, 'passkey', '--require', 'permission,sometimes'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/passkey/);
    const removed = await runCommand(process.execPath, [SERVER_ENTRY, 'passkey', '--remove', authenticator.id], { env });
    expect(removed.stdout).toMatch(/Removed the passkey/);
    expect(removed.code).toBe(0);
    engine = await open();
    expect(engine.passkeys.credentials()).toEqual([]);
    expect(engine.passkeys.require()).toEqual([]);
  });
});

describe('which relying party each surface is', () => {
  it('the Chrome extension its own origin, Firefox elicitly.localhost with its derived origin, a page its host, never an IP', async () => {
    const { relyingPartyOf } = await import('../../server/passkeys/passkey-origins.js');
    expect(relyingPartyOf(EXTENSION_ORIGIN)).toEqual({ ok: true, rpId: EXTENSION_ORIGIN, origin: EXTENSION_ORIGIN });
    // The research measured this origin in Firefox 153 for this gecko id.
    expect(firefoxWebAuthnOrigin(FIREFOX_EXTENSION_ID)).toBe('moz-extension://cdcjdfpjbbjfekoamjjnfijnlfnpigfochfcmlaafihclindfdolkekifmaaehji');
    expect(relyingPartyOf('moz-extension://0b5c7e2a-1111-4222-8333-944455556666')).toMatchObject({ ok: true, rpId: 'elicitly.localhost' });
    expect(relyingPartyOf('http://elicitly.localhost:17391')).toEqual({ ok: true, rpId: 'elicitly.localhost', origin: 'http://elicitly.localhost:17391' });
    expect(relyingPartyOf('https://box.tail1234.ts.net')).toMatchObject({ ok: true, rpId: 'box.tail1234.ts.net' });
    expect(relyingPartyOf('http://127.0.0.1:17391')).toMatchObject({ ok: false, why: expect.stringMatching(/IP address.*elicitly\.localhost/) });
    expect(relyingPartyOf('http://example.com')).toMatchObject({ ok: false });
  });
});
