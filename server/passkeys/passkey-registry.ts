// The person's passkeys and their setting ("require a passkey for …"), kept by the hub (the one writer) in
// `passkeys.json` beside the rules, replaced whole on every change like them. Registration and decisions are verified
// with @simplewebauthn/server (14.0.3: the last for Node 20, and the last that accepts the Chrome extension's RP ID),
// loaded on first use so a hub that never sees a passkey never pays for it.
import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import type * as SimpleWebAuthn from '@simplewebauthn/server';
import type * as SimpleWebAuthnHelpers from '@simplewebauthn/server/helpers';
import * as z from 'zod';
import { issue, type FieldIssue } from '../../shared/field-issues.js';
import { notUnicodeIssue } from '../../shared/well-formed.js';
import { base64url, fromBase64url, manageChallenge } from '../../shared/passkey.js';
import {
  CredentialIdSchema,
  PasskeyLabelSchema,
  PasskeyScopeSchema,
  type Assertion,
  type PasskeyEvidence,
  type PasskeyInfo,
  type PasskeyScope,
  type Registration,
} from '../../shared/passkey-wire.js';
import type { StoreIo } from '../store/journal-store.js';
import { StaleRecord } from '../store/record-store.js';
import { RulesFile, type RulesStore } from '../store/rules-file.js';
import { relyingPartyOf } from './passkey-origins.js';

export const PASSKEYS_FILE = 'passkeys.json';
/** The most passkeys kept: enough for every device a person owns, few enough to list in a receipt check. */
export const MAX_PASSKEYS = 20;
/** How long a ceremony's nonce may be used, once. */
const NONCE_MS = 5 * 60_000;
const MAX_NONCES = 64;

const B64 = z.string().regex(/^[A-Za-z0-9_-]*$/);
const CredentialEntrySchema = z.strictObject({
  kind: z.literal('credential'),
  id: CredentialIdSchema,
  label: PasskeyLabelSchema,
  rpId: z.string().min(1).max(300),
  /** The `clientDataJSON` origin it was registered from: its assertions must come from there. */
  origin: z.string().min(1).max(300),
  /** COSE public key (what @simplewebauthn verifies with) and the same key as SPKI DER (what anyone else can). */
  cose: B64,
  spki: B64,
  counter: z.number().int().nonnegative(),
  transports: z.array(z.string().max(40)).max(10),
  createdAt: z.number().int().nonnegative(),
});
export type PasskeyCredential = z.infer<typeof CredentialEntrySchema>;
const PolicyEntrySchema = z.strictObject({ kind: z.literal('policy'), id: z.literal('policy'), require: z.array(PasskeyScopeSchema) });
const EntrySchema = z.discriminatedUnion('kind', [CredentialEntrySchema, PolicyEntrySchema]);
export type PasskeyEntry = z.infer<typeof EntrySchema>;
type Entry = PasskeyEntry;

/** SHA-256 of a passkey's public key (SPKI DER), hex: what the person pins. */
export const fingerprintOf = (spki: string): string => createHash('sha256').update(Buffer.from(spki, 'base64url')).digest('hex');

export type PasskeyRefusal = { ok: false; code: 'passkey_required' | 'passkey_invalid' | 'invalid' | 'unavailable'; issues: FieldIssue[] };
/** A change to the passkeys, for the ledger. */
export type PasskeyChange =
  | { type: 'passkey.added'; credentialId: string; rpId: string; origin: string; publicKey: string; label: string }
  | { type: 'passkey.removed'; credentialId: string }
  | { type: 'passkey.policy'; require: PasskeyScope[] };

type WebAuthn = typeof SimpleWebAuthn;
let webauthn: Promise<WebAuthn> | undefined;
const loadWebAuthn = (): Promise<WebAuthn> => (webauthn ??= import('@simplewebauthn/server'));

const refuse = (code: PasskeyRefusal['code'], path: string[], rule: string, message: string): PasskeyRefusal => ({ ok: false, code, issues: [issue(path, rule, message)] });

/** Who asks for a change: a reviewer's socket (its origin; a proof needed once a passkey exists) or the terminal. */
export type Asker = { kind: 'surface'; origin: string } | { kind: 'terminal' };

export class PasskeyRegistry {
  private readonly nonces = new Map<string, number>();
  private turn: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: RulesStore<Entry>,
    private readonly hub: string,
    private readonly now: () => number,
    private readonly onChange: (change: PasskeyChange) => Promise<void>,
  ) {
    // Another hub's change (a team's database): this hub's ledger records it as one of its own, as it does the rules'.
    file.onRemoteChange((change) => {
      void this.inTurn(async () => {
        const applied = await change.apply();
        for (const event of applied ? passkeyChanges(applied.before, applied.after) : []) await onChange(event);
      }).catch(() => undefined);
    });
  }

  /**
   * `list`: where the passkeys are kept when not in the state dir's `passkeys.json` (a team's database, shared by its
   * hubs: a passkey registered through one hub is known to all, and a change another hub made is read when it is told).
   */
  static async open(options: {
    dir: string;
    hub: string;
    io?: StoreIo;
    now?: () => number;
    onChange: (change: PasskeyChange) => Promise<void>;
    list?: (parse: (raw: unknown) => Entry | undefined, max: number) => Promise<RulesStore<Entry>>;
  }): Promise<PasskeyRegistry> {
    const parse = (raw: unknown) => {
      const parsed = EntrySchema.safeParse(raw);
      return parsed.success ? parsed.data : undefined;
    };
    const max = MAX_PASSKEYS + 1;
    const file = options.list
      ? await options.list(parse, max)
      : await RulesFile.open<Entry>({ dir: options.dir, io: options.io, max, format: { name: PASSKEYS_FILE, key: 'passkeys', version: 1 }, parse });
    return new PasskeyRegistry(file, options.hub, options.now ?? Date.now, options.onChange);
  }

  /** One change to the list at a time, this hub's and the others' alike: none is made over a list read before another. */
  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const turn = this.turn.then(run);
    this.turn = turn.catch(() => undefined);
    return turn;
  }

  close(): Promise<void> {
    return this.file.close();
  }

  get failed(): Error | undefined {
    return this.file.failed;
  }

  onFailure(listener: (error: Error) => void): () => void {
    return this.file.onFailure(listener);
  }

  credentials(): PasskeyCredential[] {
    return this.file.all().filter((e): e is PasskeyCredential => e.kind === 'credential');
  }

  require(): PasskeyScope[] {
    const policy = this.file.all().find((e) => e.kind === 'policy');
    return policy?.kind === 'policy' ? policy.require : [];
  }

  info(origin: string | null): PasskeyInfo {
    const rp = origin === null ? { ok: false as const, why: 'the terminal has no authenticator' } : relyingPartyOf(origin);
    return {
      hub: this.hub,
      require: this.require(),
      passkeys: this.credentials().map((c) => ({ id: c.id, label: c.label, rpId: c.rpId, createdAt: c.createdAt, fingerprint: fingerprintOf(c.spki) })),
      rpId: rp.ok ? rp.rpId : null,
      ...(rp.ok ? {} : { why: rp.why }),
    };
  }

  /** A one-time nonce for a registration or a change (5 minutes): the challenge a passkey signs is derived from it. */
  nonce(): { nonce: string; expiresAt: number } {
    const now = this.now();
    for (const [n, until] of this.nonces) if (until <= now) this.nonces.delete(n);
    while (this.nonces.size >= MAX_NONCES) this.nonces.delete(this.nonces.keys().next().value as string);
    const nonce = base64url(randomBytes(32));
    this.nonces.set(nonce, now + NONCE_MS);
    return { nonce, expiresAt: now + NONCE_MS };
  }

  private spend(nonce: string): boolean {
    const until = this.nonces.get(nonce);
    this.nonces.delete(nonce);
    return until !== undefined && until > this.now();
  }

  /**
   * A new passkey from a reviewer's page. The first one needs nothing more than the paired socket; once one exists, a
   * new one needs an assertion by an existing one over the same change (a stolen extension key alone cannot enrol
   * the thief's authenticator).
   */
  async register(origin: string, params: { nonce: string; registration: Registration; label: string; proof?: Assertion }): Promise<{ ok: true; id: string } | PasskeyRefusal> {
    const rp = relyingPartyOf(origin);
    if (!rp.ok) return refuse('invalid', ['registration'], 'origin', rp.why);
    const notText = notUnicodeIssue(params.label, ['label']);
    if (notText) return { ok: false, code: 'invalid', issues: [notText] };
    if (!this.spend(params.nonce)) return refuse('invalid', ['nonce'], 'expired', 'this ceremony expired or was used already: start again');
    const existing = this.credentials();
    if (existing.length >= MAX_PASSKEYS) return refuse('invalid', ['registration'], 'limit', `there are already ${existing.length} passkeys, the most kept: remove one first`);
    if (existing.some((c) => c.id === params.registration.id)) return refuse('invalid', ['registration', 'id'], 'duplicate', 'this passkey is registered already');
    if (existing.length > 0) {
      const proved = await this.prove(params.proof, { add: params.registration.id }, params.nonce);
      if (!proved.ok) return proved;
    }
    const { verifyRegistrationResponse } = await loadWebAuthn();
    let info: Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>>;
    try {
      info = await verifyRegistrationResponse({
        response: { ...params.registration, clientExtensionResults: params.registration.clientExtensionResults ?? {} } as Parameters<WebAuthn['verifyRegistrationResponse']>[0]['response'],
        expectedChallenge: params.nonce,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
      });
    } catch (error) {
      return refuse('passkey_invalid', ['registration'], 'not_verified', `the new passkey did not verify: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!info.verified || !info.registrationInfo) return refuse('passkey_invalid', ['registration'], 'not_verified', 'the new passkey did not verify');
    const { credential } = info.registrationInfo;
    const spki = spkiOf(credential.publicKey, await import('@simplewebauthn/server/helpers'));
    if (spki === null) return refuse('passkey_invalid', ['registration'], 'algorithm', 'this passkey uses a key type the hub does not keep (use one with ES256, RS256 or Ed25519)');
    const entry: PasskeyCredential = {
      kind: 'credential',
      id: credential.id,
      label: params.label,
      rpId: rp.rpId,
      origin: rp.origin,
      cose: Buffer.from(credential.publicKey).toString('base64url'),
      spki,
      counter: credential.counter,
      transports: credential.transports ?? [],
      createdAt: this.now(),
    };
    if (!(await this.replace((all) => [...all, entry]))) return refuse('unavailable', ['registration'], 'unavailable', 'the hub could not record the passkey');
    await this.onChange({ type: 'passkey.added', credentialId: entry.id, rpId: entry.rpId, origin: entry.origin, publicKey: entry.spki, label: entry.label });
    return { ok: true, id: entry.id };
  }

  /** Removes a passkey: from a page with a passkey's assertion over the removal, or from the terminal (a lost passkey). */
  async remove(asker: Asker, params: { id: string; nonce?: string; proof?: Assertion }): Promise<{ ok: true; removed: boolean } | PasskeyRefusal> {
    if (!this.credentials().some((c) => c.id === params.id)) return { ok: true, removed: false };
    if (asker.kind === 'surface') {
      const proved = await this.proveWithNonce(params, { remove: params.id });
      if (!proved.ok) return proved;
    }
    if (!(await this.replace((all) => all.filter((e) => e.id !== params.id)))) return refuse('unavailable', ['id'], 'unavailable', 'the hub could not record the change');
    await this.onChange({ type: 'passkey.removed', credentialId: params.id });
    // Nothing may need a passkey that nobody has: the setting goes with the last one.
    if (this.credentials().length === 0 && this.require().length > 0) await this.setPolicy([]);
    return { ok: true, removed: true };
  }

  /** The setting. Tightening needs no proof; loosening it from a page needs a passkey's assertion over the new setting. */
  async setRequire(asker: Asker, params: { require: PasskeyScope[]; nonce?: string; proof?: Assertion }): Promise<{ ok: true } | PasskeyRefusal> {
    const next = [...new Set(params.require)].sort();
    if (next.length > 0 && this.credentials().length === 0) return refuse('invalid', ['require'], 'no_passkey', 'register a passkey first: nothing could be decided otherwise');
    const loosening = this.require().some((scope) => !next.includes(scope));
    if (loosening && asker.kind === 'surface') {
      const proved = await this.proveWithNonce(params, { require: next });
      if (!proved.ok) return proved;
    }
    return (await this.setPolicy(next)) ? { ok: true } : refuse('unavailable', ['require'], 'unavailable', 'the hub could not record the change');
  }

  private async setPolicy(require: PasskeyScope[]): Promise<boolean> {
    const change = (all: readonly Entry[]): Entry[] => {
      const rest = all.filter((e) => e.kind !== 'policy');
      return require.length === 0 ? rest : [...rest, { kind: 'policy', id: 'policy', require }];
    };
    if (!(await this.replace(change))) return false;
    await this.onChange({ type: 'passkey.policy', require });
    return true;
  }

  /** A change approved by one of the passkeys: an assertion over `manageChallenge` of this nonce (spent) and change. */
  approve(params: { nonce?: string; proof?: Assertion }, change: unknown): Promise<{ ok: true } | PasskeyRefusal> {
    return this.proveWithNonce(params, change);
  }

  private async proveWithNonce(params: { nonce?: string; proof?: Assertion }, change: unknown): Promise<{ ok: true } | PasskeyRefusal> {
    if (params.nonce === undefined || params.proof === undefined) return refuse('passkey_required', ['proof'], 'passkey_required', 'approve this change with one of your passkeys');
    if (!this.spend(params.nonce)) return refuse('invalid', ['nonce'], 'expired', 'this ceremony expired or was used already: start again');
    return this.prove(params.proof, change, params.nonce);
  }

  private async prove(proof: Assertion | undefined, change: unknown, nonce: string): Promise<{ ok: true } | PasskeyRefusal> {
    if (proof === undefined) return refuse('passkey_required', ['proof'], 'passkey_required', 'approve this change with one of your passkeys');
    const checked = await this.verify(proof, manageChallenge({ hub: this.hub, nonce, change }), ['proof']);
    return checked.ok ? { ok: true } : checked;
  }

  /**
   * Checks an assertion over `challenge` against the registered passkey it names (found by its id, which the library
   * does not check itself), then keeps its new signature counter.
   */
  async verify(assertion: Assertion, challenge: string, path: string[]): Promise<{ ok: true; evidence: PasskeyEvidence } | PasskeyRefusal> {
    const credential = this.credentials().find((c) => c.id === assertion.id && c.id === assertion.rawId);
    if (!credential) return refuse('passkey_invalid', [...path, 'id'], 'unknown_passkey', 'this passkey is not registered with this hub (removed, or never added)');
    const { verifyAuthenticationResponse } = await loadWebAuthn();
    let newCounter: number;
    try {
      const result = await verifyAuthenticationResponse({
        response: { ...assertion, clientExtensionResults: assertion.clientExtensionResults ?? {} } as Parameters<WebAuthn['verifyAuthenticationResponse']>[0]['response'],
        expectedChallenge: challenge,
        expectedOrigin: credential.origin,
        expectedRPID: credential.rpId,
        credential: { id: credential.id, publicKey: fromBase64url(credential.cose) as Uint8Array<ArrayBuffer>, counter: credential.counter },
        requireUserVerification: true,
      });
      if (!result.verified) return refuse('passkey_invalid', path, 'not_verified', 'the passkey did not sign this');
      newCounter = result.authenticationInfo.newCounter;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const changed = /challenge/i.test(message);
      return refuse('passkey_invalid', path, changed ? 'challenge_mismatch' : 'not_verified', changed ? 'the passkey signed something else: the request or the decision changed after it was approved' : `the passkey's signature did not verify: ${message}`);
    }
    if (newCounter !== credential.counter) {
      await this.replace((all) => all.map((e) => (e.kind === 'credential' && e.id === credential.id ? { ...e, counter: newCounter } : e)));
    }
    const { response } = assertion;
    return {
      ok: true,
      evidence: { credentialId: credential.id, rpId: credential.rpId, origin: credential.origin, authenticatorData: response.authenticatorData, clientDataJSON: response.clientDataJSON, signature: response.signature },
    };
  }

  /**
   * Makes `change` over the list as stored; when another hub changed it first (a team's database), over the newer list,
   * a few times at most. False when it could not be written.
   */
  private replace(change: (all: readonly Entry[]) => Entry[]): Promise<boolean> {
    return this.inTurn(async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          await this.file.replace(change(this.file.all()));
          return true;
        } catch (error) {
          if (!(error instanceof StaleRecord)) return false;
          // The newer list is this hub's news too: its ledger records what the other hub changed.
          const applied = await this.file.refresh().catch(() => null);
          for (const event of applied ? passkeyChanges(applied.before, applied.after) : []) await this.onChange(event);
        }
      }
      return false;
    });
  }
}

/** What a newer list changed, as the ledger says it: passkeys added and removed, and the setting (a counter is not a change). */
export function passkeyChanges(before: readonly Entry[], after: readonly Entry[]): PasskeyChange[] {
  const credentials = (list: readonly Entry[]) => new Map(list.flatMap((e) => (e.kind === 'credential' ? [[e.id, e] as const] : [])));
  const policy = (list: readonly Entry[]) => list.find((e) => e.kind === 'policy')?.require ?? [];
  const [was, now] = [credentials(before), credentials(after)];
  const changes: PasskeyChange[] = [];
  for (const [id, c] of now) if (!was.has(id)) changes.push({ type: 'passkey.added', credentialId: id, rpId: c.rpId, origin: c.origin, publicKey: c.spki, label: c.label });
  for (const id of was.keys()) if (!now.has(id)) changes.push({ type: 'passkey.removed', credentialId: id });
  if (JSON.stringify(policy(before)) !== JSON.stringify(policy(after))) changes.push({ type: 'passkey.policy', require: policy(after) });
  return changes;
}

type Helpers = Pick<typeof SimpleWebAuthnHelpers, 'decodeCredentialPublicKey' | 'cose'>;

/** A COSE public key as SPKI DER (base64url), for verifiers that have node:crypto and nothing else; null: not kept. */
function spkiOf(coseKey: Uint8Array, helpers: Helpers): string | null {
  const { decodeCredentialPublicKey, cose } = helpers;
  const key = decodeCredentialPublicKey(coseKey as Uint8Array<ArrayBuffer>);
  const b64 = (value: Uint8Array | undefined) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64url') : null);
  let jwk: Record<string, string> | null = null;
  if (cose.isCOSEPublicKeyEC2(key) && key.get(cose.COSEKEYS.crv) === cose.COSECRV.P256) {
    const x = b64(key.get(cose.COSEKEYS.x));
    const y = b64(key.get(cose.COSEKEYS.y));
    if (x && y) jwk = { kty: 'EC', crv: 'P-256', x, y };
  } else if (cose.isCOSEPublicKeyOKP(key) && key.get(cose.COSEKEYS.crv) === cose.COSECRV.ED25519) {
    const x = b64(key.get(cose.COSEKEYS.x));
    if (x) jwk = { kty: 'OKP', crv: 'Ed25519', x };
  } else if (cose.isCOSEPublicKeyRSA(key)) {
    const n = b64(key.get(cose.COSEKEYS.n));
    const e = b64(key.get(cose.COSEKEYS.e));
    if (n && e) jwk = { kty: 'RSA', n, e };
  }
  if (jwk === null) return null;
  return createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'der', type: 'spki' }).toString('base64url');
}
