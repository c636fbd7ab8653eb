import { createECDH } from 'node:crypto';
// @ts-expect-error http_ece ships no types. It is the RFC 8188/8291 reference code (by the RFCs' author), so a message
// it opens was encrypted as a browser's push service delivers it, not merely as our own code expects.
import ece from 'http_ece';
import { base64url } from '../../shared/passkey.js';
import { PushPayloadSchema, type PushPayload, type PushSubscription } from '../../shared/push-notice.js';

/** A browser's side of a push subscription: the keys it publishes, and the private key and secret it opens messages with. */
export interface BrowserPushKeys {
  subscription: PushSubscription;
  privateKey: Buffer;
  auth: Buffer;
}

export function browserPushKeys(endpoint: string): BrowserPushKeys {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = Buffer.from(crypto.getRandomValues(new Uint8Array(16)));
  return { subscription: { endpoint, keys: { p256dh: base64url(ecdh.getPublicKey()), auth: base64url(auth) } }, privateKey: ecdh.getPrivateKey(), auth };
}

/** Opens a push message's body as the browser does; throws when it was not encrypted to these keys. */
export function decryptPush(body: Buffer, keys: Pick<BrowserPushKeys, 'privateKey' | 'auth'>): string {
  const receiver = createECDH('prime256v1');
  receiver.setPrivateKey(keys.privateKey);
  return Buffer.from(ece.decrypt(body, { version: 'aes128gcm', privateKey: receiver, authSecret: keys.auth })).toString('utf8');
}

/** The notification a push carries, opened and read through its schema. */
export function openPush(body: Buffer, keys: Pick<BrowserPushKeys, 'privateKey' | 'auth'>): PushPayload {
  return PushPayloadSchema.parse(JSON.parse(decryptPush(body, keys)));
}
