import { createECDH, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, randomBytes, sign, createCipheriv, createHash, type KeyObject } from 'node:crypto';
import * as z from 'zod';
import type { PushSubscription } from '../../shared/push-notice.js';
import { base64url, fromBase64url } from '../../shared/passkey.js';

/**
 * Web Push as the hub sends it, on node:crypto alone (no library: the two RFCs are a few hashes and one cipher):
 * the message encrypted to one subscription (RFC 8291, `aes128gcm` of RFC 8188), so the push service carries
 * ciphertext only, and the hub identified to the push service by its VAPID key (RFC 8292).
 */

/** The hub's VAPID key pair, kept in the state dir (`push-keys.json`, 0600): a P-256 private key as a JWK. */
export const VapidKeysSchema = z.strictObject({
  version: z.literal(1),
  privateKey: z.strictObject({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string(), d: z.string() }),
});
export type VapidKeys = z.infer<typeof VapidKeysSchema>;

export function newVapidKeys(): VapidKeys {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return VapidKeysSchema.parse({ version: 1, privateKey: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d } });
}

/** The public key as a page's `applicationServerKey` takes it: the uncompressed point (65 bytes), base64url. */
export function vapidPublicKey(keys: VapidKeys): string {
  const { x, y } = keys.privateKey;
  return base64url(Buffer.concat([Buffer.from([4]), fromBase64url(x), fromBase64url(y)]));
}

/** Where the push service is: a JWT's `aud` is its origin. */
const VAPID_TTL_S = 12 * 3600;
/** Who to contact about this sender: push services (Apple's) refuse a JWT without a `sub`. */
export const VAPID_SUBJECT = 'https://github.com/elicitly/elicitly-companion';

/** `Authorization: vapid t=<JWT signed ES256>, k=<public key>` for one push service (RFC 8292). */
export function vapidAuthorization(keys: VapidKeys, endpoint: string, now: number): string {
  const header = base64url(Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ES256' })));
  const claims = base64url(Buffer.from(JSON.stringify({ aud: new URL(endpoint).origin, exp: Math.floor(now / 1000) + VAPID_TTL_S, sub: VAPID_SUBJECT })));
  const key: KeyObject = createPrivateKey({ key: keys.privateKey, format: 'jwk' });
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' });
  return `vapid t=${header}.${claims}.${base64url(signature)}, k=${vapidPublicKey(keys)}`;
}

/** One aes128gcm record: the payload must fit in it with its delimiter, tag and header (RFC 8291 §4: 4096 octets). */
export const RECORD_SIZE = 4096;
export const MAX_PLAINTEXT = RECORD_SIZE - 86 - 16 - 1;

/** The subscription's keys as bytes, checked: a P-256 point (65 bytes) and a 16-byte auth secret. */
function subscriptionKeys(subscription: PushSubscription): { uaPublic: Buffer; auth: Buffer } {
  const uaPublic = Buffer.from(fromBase64url(subscription.keys.p256dh));
  const auth = Buffer.from(fromBase64url(subscription.keys.auth));
  if (uaPublic.length !== 65 || uaPublic[0] !== 4) throw new Error('keys.p256dh is not an uncompressed P-256 point');
  if (auth.length !== 16) throw new Error('keys.auth is not 16 bytes');
  // Throws when the point is not on the curve.
  createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: base64url(uaPublic.subarray(1, 33)), y: base64url(uaPublic.subarray(33)) }, format: 'jwk' });
  return { uaPublic, auth };
}

/**
 * The body of one push message: `plaintext` encrypted to the subscription (RFC 8291 §3.4, one record, RFC 8188 header
 * with the sender's ephemeral public key as its key id). `salt` and the ephemeral key are fresh unless a test gives them.
 */
export function encryptPush(plaintext: Uint8Array, subscription: PushSubscription, fixed?: { salt: Buffer; senderPrivate: Buffer }): Buffer {
  if (plaintext.length > MAX_PLAINTEXT) throw new Error(`a push payload is at most ${MAX_PLAINTEXT} bytes; this one is ${plaintext.length}`);
  const { uaPublic, auth } = subscriptionKeys(subscription);
  const ecdh = createECDH('prime256v1');
  if (fixed) ecdh.setPrivateKey(fixed.senderPrivate);
  else ecdh.generateKeys();
  const asPublic = ecdh.getPublicKey();
  const shared = ecdh.computeSecret(uaPublic);
  const salt = fixed?.salt ?? randomBytes(16);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const cipher = createCipheriv('aes-128-gcm', cek, nonce);
  // 0x02: the last (and only) record's delimiter; no padding.
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.update(Buffer.from([2])), cipher.final(), cipher.getAuthTag()]);
  const header = Buffer.alloc(21);
  salt.copy(header, 0);
  header.writeUInt32BE(RECORD_SIZE, 16);
  header.writeUInt8(asPublic.length, 20);
  return Buffer.concat([header, asPublic, sealed]);
}

/**
 * A `Topic` header for a request (RFC 8030 §5.4): at most 32 base64url characters, so a reminder replaces the
 * notification of the same request that the push service still holds instead of queueing behind it.
 */
export function pushTopic(elicitationId: string): string {
  return createHash('sha256').update(elicitationId).digest('base64url').slice(0, 32);
}

/** The POST that hands one message to a subscription's push service. */
export function pushRequest(input: { keys: VapidKeys; subscription: PushSubscription; plaintext: Uint8Array; ttlSeconds: number; topic: string; now: number }): { url: string; headers: Record<string, string>; body: Buffer } {
  const body = encryptPush(input.plaintext, input.subscription);
  return {
    url: input.subscription.endpoint,
    body,
    headers: {
      'Content-Type': 'application/octet-stream',
      'Content-Encoding': 'aes128gcm',
      TTL: String(Math.max(0, Math.min(86_400, Math.floor(input.ttlSeconds)))),
      Urgency: 'high',
      Topic: input.topic,
      Authorization: vapidAuthorization(input.keys, input.subscription.endpoint, input.now),
    },
  };
}
