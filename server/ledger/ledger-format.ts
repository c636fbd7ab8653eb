// The ledger's lines: one entry per line, canonical JSON (RFC 8785, `canonicalize`), each naming the hash of the one
// before it, so changing, removing or reordering any line breaks every hash after it. Checkpoints are entries too,
// signed (Ed25519) over the chain's head and size, so a verifier who pinned the hub's public key needs to trust nothing
// else. Pure: the store writes these lines, `audit verify` reads them.
import { createHash, createPublicKey, hash, sign, verify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import * as z from 'zod';
import { Sha256HexSchema } from '../../shared/receipt.js';
import { CredentialIdSchema, PasskeyEvidenceSchema, PasskeyScopeSchema } from '../../shared/passkey-wire.js';

export const GENESIS = '0'.repeat(64);
export const KeyRoleSchema = z.enum(['extension', 'device', 'relay']);
export type KeyRole = z.infer<typeof KeyRoleSchema>;
const IdSchema = z.string().min(1).max(200);

/** What happened, as the hub saw it. Hashes, never the content: the ledger proves, the journal holds. */
export const LedgerEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('request.created'), id: IdSchema, kind: z.string().min(1).max(40), requestHash: Sha256HexSchema, requester: z.string().max(200) }),
  z.strictObject({
    type: z.literal('request.decided'),
    id: IdSchema,
    decision: z.enum(['approved', 'rejected']),
    decidedVia: z.string().min(1).max(40),
    /** The reviewer whose paired browser or phone decided, on a team's hub (`reviewer add`, `pair --reviewer`). */
    decidedBy: z.string().min(1).max(64).optional(),
    ruleId: z.string().max(100).optional(),
    decidedAt: z.number().int().nonnegative(),
    requestHash: Sha256HexSchema,
    decisionHash: Sha256HexSchema,
    /** The person's passkey assertion over this decision (`shared/passkey.ts`), when the request needed one. */
    passkey: PasskeyEvidenceSchema.optional(),
  }),
  /** A reviewer showed it to the person, rendered to this hash (the surface's own, to compare with the created one). */
  z.strictObject({ type: z.literal('request.shown'), id: IdSchema, surface: z.string().min(1).max(40), requestHash: Sha256HexSchema }),
  z.strictObject({ type: z.literal('request.collected'), id: IdSchema }),
  z.strictObject({ type: z.literal('request.expired'), id: IdSchema }),
  z.strictObject({ type: z.literal('request.withdrawn'), id: IdSchema }),
  /** Forgotten by the journal after the retention period (its events stay here). */
  z.strictObject({ type: z.literal('request.purged'), id: IdSchema }),
  /**
   * An event written while the journal's write of the same change failed or was cut by a crash: the change was never
   * acknowledged, and did not happen. Appended at the next open; the event itself stays, as everything here does.
   */
  z.strictObject({ type: z.literal('request.unrecorded'), id: IdSchema, event: z.string().min(1).max(40) }),
  z.strictObject({ type: z.literal('rule.saved'), ruleId: IdSchema, ruleHash: Sha256HexSchema }),
  z.strictObject({ type: z.literal('rule.removed'), ruleId: IdSchema }),
  /** A passkey registered: its public key (SPKI DER, base64url) stays here, so its receipts verify after it is removed. */
  z.strictObject({ type: z.literal('passkey.added'), credentialId: CredentialIdSchema, rpId: z.string().min(1).max(300), origin: z.string().min(1).max(300), publicKey: z.string().min(1).max(2000), label: z.string().max(60) }),
  z.strictObject({ type: z.literal('passkey.removed'), credentialId: CredentialIdSchema }),
  /**
   * A key that may call the hub appeared or went: a paired extension or device, or a relay key exported (with what it
   * was granted). Read from the state dir whenever it changes (the hub's own pairing, `pair --remove`, `key revoke`),
   * and reconciled when a hub starts, so a change made while no hub ran is recorded then.
   */
  z.strictObject({ type: z.literal('key.added'), role: KeyRoleSchema, keyId: z.string().min(1).max(40), fingerprint: Sha256HexSchema, origin: z.string().max(300).optional(), name: z.string().max(60).optional(), grants: z.array(z.string().max(40)).max(10).optional() }),
  z.strictObject({ type: z.literal('key.removed'), role: KeyRoleSchema, keyId: z.string().min(1).max(40) }),
  z.strictObject({ type: z.literal('passkey.policy'), require: z.array(PasskeyScopeSchema) }),
  /** Whole sealed segments removed by retention (`ELICITLY_LEDGER_RETENTION_DAYS`): the ledger kept starts from the checkpoint that sealed the last. */
  z.strictObject({ type: z.literal('segments.pruned'), first: z.number().int().positive(), last: z.number().int().positive(), through: z.number().int().nonnegative() }),
  z.strictObject({ type: z.literal('checkpoint'), size: z.number().int().nonnegative(), head: Sha256HexSchema, keyId: z.string().min(1).max(100), signature: z.string().min(1).max(200) }),
]);
export type LedgerEvent = z.infer<typeof LedgerEventSchema>;

export const LedgerEntrySchema = z.strictObject({
  index: z.number().int().nonnegative(),
  at: z.number().int().nonnegative(),
  prev: Sha256HexSchema,
  event: LedgerEventSchema,
  hash: Sha256HexSchema,
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** RFC 8785 canonical JSON of a JSON value (what is hashed, signed and written). */
export function canonical(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('not a JSON value');
  return text;
}

/** One-shot `crypto.hash` (Node 20.12+): about twice as fast as `createHash` on a line's few hundred bytes. */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');

/** A value's hash: SHA-256 of its canonical JSON. */
export const hashOf = (value: unknown): string => sha256(canonical(value));

/**
 * An entry and its line. The event is canonicalized once; the rest (integers, hex digests) is laid around it in the
 * canonical key order (`at`, `event`, `hash`, `index`, `prev`): the same text `canonical(entry)` gives, which
 * `readEntry` checks of every line.
 */
export function entryLine(index: number, at: number, prev: string, event: LedgerEvent): { entry: LedgerEntry; line: string } {
  const body = canonical(event);
  const hash = sha256(`{"at":${at},"event":${body},"index":${index},"prev":"${prev}"}`);
  return { entry: { index, at, prev, event, hash }, line: `{"at":${at},"event":${body},"hash":"${hash}","index":${index},"prev":"${prev}"}` };
}

/** What a checkpoint signs: the chain's size (entries before it), its head, and when. */
export const checkpointMessage = (size: number, head: string, at: number): Buffer => Buffer.from(canonical({ ledger: 'elicitly-companion', size, head, at }), 'utf8');

/** The key's id: the first 16 hex digits of the SHA-256 of its raw public key. */
export function keyIdOf(publicKey: KeyObject): string {
  let id = keyIds.get(publicKey);
  if (id === undefined) {
    id = createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('hex').slice(0, 16);
    keyIds.set(publicKey, id);
  }
  return id;
}
/** Key ids by key: a receipt check asks for one each time, and exporting the key costs more than the check's hashing. */
const keyIds = new WeakMap<KeyObject, string>();

export function signCheckpoint(privateKey: KeyObject, size: number, head: string, at: number): string {
  return sign(null, checkpointMessage(size, head, at), privateKey).toString('base64');
}

export function checkpointSigned(publicKey: KeyObject, entry: LedgerEntry): boolean {
  if (entry.event.type !== 'checkpoint') return false;
  try {
    return verify(null, checkpointMessage(entry.event.size, entry.event.head, entry.at), publicKey, Buffer.from(entry.event.signature, 'base64'));
  } catch {
    return false;
  }
}

/** A public key from its PEM (SPKI) text, or null. */
export function publicKeyFrom(pem: string): KeyObject | null {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

/**
 * Reads one line as an entry: valid, and carrying the hash of its own text. The hash is checked over the line's exact
 * characters with its `"hash"` field taken out (the writer hashed that canonical text), so any change to the line, to
 * a value, an escape, the spacing or the key order, shows; re-canonicalizing every line would cost twice the time.
 */
export function readEntry(line: string): { ok: true; entry: LedgerEntry } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, problem: 'not JSON (a changed or torn line)' };
  }
  const parsed = LedgerEntrySchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problem: `not a ledger entry (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})` };
  const field = `,"hash":"${parsed.data.hash}"`;
  const at = line.lastIndexOf(field);
  if (at === -1 || sha256(line.slice(0, at) + line.slice(at + field.length)) !== parsed.data.hash) return { ok: false, problem: 'its hash does not match its text (the line was changed)' };
  return { ok: true, entry: parsed.data };
}
