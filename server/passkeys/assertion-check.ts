// A passkey's assertion checked with node:crypto alone, as anyone can check a receipt without the hub or a WebAuthn
// library: the client data says "webauthn.get" over the expected challenge from the expected origin, the
// authenticator data is for the expected RP ID with the person present and verified, and the signature verifies with
// the passkey's public key (WebAuthn Level 3, §7.2 "Verifying an Authentication Assertion").
import { createHash, createPublicKey, verify } from 'node:crypto';
import * as z from 'zod';
import type { PasskeyEvidence } from '../../shared/passkey-wire.js';

const ClientDataSchema = z.looseObject({ type: z.string(), challenge: z.string(), origin: z.string(), crossOrigin: z.boolean().optional() });

const UP = 0x01;
const UV = 0x04;

/** Null when the assertion holds; otherwise what is wrong with it. */
export function assertionProblem(evidence: PasskeyEvidence, expected: { challenge: string; publicKey: string }): string | null {
  let clientData: z.infer<typeof ClientDataSchema>;
  try {
    const parsed = ClientDataSchema.safeParse(JSON.parse(Buffer.from(evidence.clientDataJSON, 'base64url').toString('utf8')));
    if (!parsed.success) return 'its client data is not WebAuthn client data';
    clientData = parsed.data;
  } catch {
    return 'its client data is not JSON';
  }
  if (clientData.type !== 'webauthn.get') return `its client data is of type ${clientData.type}, not webauthn.get`;
  if (clientData.challenge !== expected.challenge) return 'it signed another challenge: another request, or other values than the ones recorded';
  if (clientData.origin !== evidence.origin) return `it was made on ${clientData.origin}, not ${evidence.origin}`;
  if (clientData.crossOrigin === true) return 'it was made in a cross-origin frame';
  const authData = Buffer.from(evidence.authenticatorData, 'base64url');
  if (authData.length < 37) return 'its authenticator data is too short';
  if (!authData.subarray(0, 32).equals(createHash('sha256').update(evidence.rpId, 'utf8').digest())) return `it is not for the relying party ${evidence.rpId}`;
  const flags = authData[32] ?? 0;
  if ((flags & UP) === 0 || (flags & UV) === 0) return 'the person was not verified by the authenticator (user presence and verification flags)';
  let key;
  try {
    key = createPublicKey({ key: Buffer.from(expected.publicKey, 'base64url'), format: 'der', type: 'spki' });
  } catch {
    return 'the passkey public key cannot be read';
  }
  const signed = Buffer.concat([authData, createHash('sha256').update(Buffer.from(evidence.clientDataJSON, 'base64url')).digest()]);
  const algorithm = key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  return verify(algorithm, signed, key, Buffer.from(evidence.signature, 'base64url')) ? null : 'its signature does not verify with the passkey public key';
}
