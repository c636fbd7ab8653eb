// The WebAuthn ceremonies of the extension's pages: adding a passkey, approving a change to them with one, and signing
// a decision. The page holds the authenticator (a service worker has no `navigator.credentials`); the hub makes the
// nonces and verifies. Loaded when a ceremony starts: the hashing and these schemas stay out of the popup's first chunk.
import * as z from 'zod';
import { base64url, decisionChallenge, decisionCore, decisionHash, fromBase64url, manageChallenge } from '../../shared/passkey.js';
import { AssertionSchema, PasskeyInfoSchema, RegistrationSchema, type Assertion, type PasskeyInfo, type PasskeyScope } from '../../shared/passkey-wire.js';
import { FieldIssueSchema } from '../../shared/field-issues.js';
import type { RequestRow } from '../rows/rows.js';
import type { RuleDraft } from '../../shared/rules.js';
import type { ReviewerClient, Decision, PasskeyMethod } from '../messages.js';

/** How long the browser's passkey dialog may stay open. */
const CEREMONY_MS = 120_000;

export const NOT_CONNECTED = 'The hub is not connected: passkeys are checked by the hub, so try again once it is.';

export type Ceremony<T> = { ok: true; value: T } | { ok: false; message: string };

const NonceSchema = z.strictObject({ nonce: z.string(), expiresAt: z.number() });
const ChangeSchema = z.strictObject({
  ok: z.boolean(),
  id: z.string().optional(),
  removed: z.boolean().optional(),
  reason: z.string().optional(),
  issues: z.array(FieldIssueSchema).optional(),
});

type Passkeys = Required<Pick<ReviewerClient, 'passkey'>>;

async function call<T>(client: Passkeys, method: PasskeyMethod, params: Record<string, unknown>, schema: z.ZodType<T>): Promise<Ceremony<T>> {
  const reply = await client.passkey(method, params);
  if (reply.state === 'not_connected') return { ok: false, message: NOT_CONNECTED };
  if (reply.state === 'no_answer') return { ok: false, message: 'The hub did not answer in time; try again.' };
  if (reply.state === 'error') return { ok: false, message: reply.message };
  if (!reply.ok) return { ok: false, message: reply.message };
  const parsed = schema.safeParse(reply.value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: `The hub's answer to ${method} was not understood.` };
}

export const passkeyInfo = (client: Passkeys) => call(client, 'passkey.info', {}, PasskeyInfoSchema);

/** The Chrome extension's own RP ID is its origin, given by leaving `rp.id` out; every other RP ID is named. */
const rpIdOption = (rpId: string) => (rpId.includes('://') ? {} : { rpId });

/** The browser's passkey dialog, with what went wrong said in the person's words. */
async function ceremony<T>(run: () => Promise<Credential | null>, parse: (json: unknown) => T): Promise<Ceremony<T>> {
  try {
    const credential = await run();
    if (!(credential instanceof PublicKeyCredential)) return { ok: false, message: 'No passkey was given.' };
    return { ok: true, value: parse(credential.toJSON()) };
  } catch (error) {
    const name = error instanceof DOMException ? error.name : '';
    if (name === 'NotAllowedError') return { ok: false, message: 'The passkey was not used (the dialog was closed, timed out, or the person was not verified). Nothing was sent.' };
    if (name === 'InvalidStateError') return { ok: false, message: 'This authenticator already holds a passkey for Elicitly.' };
    return { ok: false, message: `The browser refused the passkey: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** An assertion over `challenge` by one of the passkeys this surface can use. */
export function assertOver(info: PasskeyInfo, challenge: string): Promise<Ceremony<Assertion>> {
  const rpId = info.rpId;
  if (rpId === null) return Promise.resolve({ ok: false, message: info.why ?? 'This page cannot use passkeys.' });
  const usable = info.passkeys.filter((p) => p.rpId === rpId);
  if (usable.length === 0) return Promise.resolve({ ok: false, message: 'None of your passkeys can be used here: add one in Settings.' });
  return ceremony(
    () =>
      navigator.credentials.get({
        publicKey: {
          challenge: fromBase64url(challenge) as Uint8Array<ArrayBuffer>,
          allowCredentials: usable.map((p) => ({ type: 'public-key', id: fromBase64url(p.id) as Uint8Array<ArrayBuffer> })),
          userVerification: 'required',
          timeout: CEREMONY_MS,
          ...rpIdOption(rpId),
        },
      }),
    (json) => AssertionSchema.parse(json),
  );
}

/**
 * Signs a decision: the challenge is derived from this request's id, the hash of what the view shows and the values the
 * hub will record (`decisionCore`, the hub's own function), so the passkey approves exactly what is sent.
 */
export async function signDecision(client: Passkeys, row: RequestRow, decision: Decision): Promise<Ceremony<Decision>> {
  if (decision.shownHash === undefined) return { ok: false, message: 'The view has no hash to sign.' };
  const core = decisionCore(row.request, decision);
  // Values the hub would refuse: sent unsigned, so the hub names the field (nothing is decided either way).
  if (!core.ok) return { ok: true, value: decision };
  const info = await passkeyInfo(client);
  if (!info.ok) return info;
  const challenge = decisionChallenge({ hub: info.value.hub, requestId: row.elicitationId, requestHash: decision.shownHash, decisionHash: decisionHash(core.core) });
  const assertion = await assertOver(info.value, challenge);
  return assertion.ok ? { ok: true, value: { ...decision, passkey: assertion.value } } : assertion;
}

/** What a change answered: ok, or the hub's reason in words. */
function changed(answer: Ceremony<z.infer<typeof ChangeSchema>>): Ceremony<z.infer<typeof ChangeSchema>> {
  if (!answer.ok || answer.value.ok) return answer;
  return { ok: false, message: answer.value.issues?.map((i) => i.message).join(' ') || `Refused (${answer.value.reason ?? 'invalid'}).` };
}

/** A change approved with a passkey when the hub asks for one: tried as it is first only when nothing needs approving. */
async function approved(client: Passkeys, info: PasskeyInfo, method: 'passkey.remove' | 'passkey.require', params: Record<string, unknown>, change: unknown, needsProof: boolean) {
  if (!needsProof) return changed(await call(client, method, params, ChangeSchema));
  const nonce = await call(client, 'passkey.nonce', {}, NonceSchema);
  if (!nonce.ok) return nonce;
  const proof = await assertOver(info, manageChallenge({ hub: info.hub, nonce: nonce.value.nonce, change }));
  if (!proof.ok) return proof;
  return changed(await call(client, method, { ...params, nonce: nonce.value.nonce, proof: proof.value }, ChangeSchema));
}

/** Adds a passkey; once one exists, one of them approves the new one first. */
export async function addPasskey(client: Passkeys, info: PasskeyInfo, label: string): Promise<Ceremony<unknown>> {
  const rpId = info.rpId;
  if (rpId === null) return { ok: false, message: info.why ?? 'This page cannot use passkeys.' };
  const nonce = await call(client, 'passkey.nonce', {}, NonceSchema);
  if (!nonce.ok) return nonce;
  const user = new Uint8Array(16);
  crypto.getRandomValues(user);
  const registration = await ceremony(
    () =>
      navigator.credentials.create({
        publicKey: {
          rp: { name: 'Elicitly Companion', ...(rpId.includes('://') ? {} : { id: rpId }) },
          user: { id: user, name: `elicitly-${base64url(user).slice(0, 8)}`, displayName: label },
          challenge: fromBase64url(nonce.value.nonce) as Uint8Array<ArrayBuffer>,
          pubKeyCredParams: [
            { type: 'public-key', alg: -7 },
            { type: 'public-key', alg: -8 },
            { type: 'public-key', alg: -257 },
          ],
          authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
          attestation: 'none',
          excludeCredentials: info.passkeys.filter((p) => p.rpId === rpId).map((p) => ({ type: 'public-key', id: fromBase64url(p.id) as Uint8Array<ArrayBuffer> })),
          timeout: CEREMONY_MS,
        },
      }),
    (json) => RegistrationSchema.parse(json),
  );
  if (!registration.ok) return registration;
  let proof: Assertion | undefined;
  if (info.passkeys.length > 0) {
    const approvedBy = await assertOver(info, manageChallenge({ hub: info.hub, nonce: nonce.value.nonce, change: { add: registration.value.id } }));
    if (!approvedBy.ok) return approvedBy;
    proof = approvedBy.value;
  }
  return changed(await call(client, 'passkey.register', { nonce: nonce.value.nonce, registration: registration.value, label, ...(proof ? { proof } : {}) }, ChangeSchema));
}

/**
 * A passkey's approval of a rule save when the person's setting asks for one (`rules`), over exactly this id and draft;
 * null when it does not.
 */
export async function approveRule(client: Passkeys, id: string | undefined, draft: RuleDraft): Promise<Ceremony<{ nonce: string; proof: Assertion } | null>> {
  const info = await passkeyInfo(client);
  if (!info.ok) return info;
  if (!info.value.require.includes('rules')) return { ok: true, value: null };
  const nonce = await call(client, 'passkey.nonce', {}, NonceSchema);
  if (!nonce.ok) return nonce;
  const proof = await assertOver(info.value, manageChallenge({ hub: info.value.hub, nonce: nonce.value.nonce, change: { rule: { id: id ?? null, draft } } }));
  return proof.ok ? { ok: true, value: { nonce: nonce.value.nonce, proof: proof.value } } : proof;
}

export const removePasskey = (client: Passkeys, info: PasskeyInfo, id: string) => approved(client, info, 'passkey.remove', { id }, { remove: id }, true);

/** The setting; loosening it (a scope dropped) needs a passkey's approval, tightening does not. */
export function setRequire(client: Passkeys, info: PasskeyInfo, require: PasskeyScope[]) {
  const next = [...new Set(require)].sort();
  const loosening = info.require.some((scope) => !next.includes(scope));
  return approved(client, info, 'passkey.require', { require: next }, { require: next }, loosening);
}
