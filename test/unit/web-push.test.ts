// Issue 35, part 1: Web Push as the hub sends it. The encryption is checked against RFC 8291's own worked example and
// decrypted by an independent implementation (http_ece, by the RFC's author); the VAPID header is verified as a push
// service verifies it.
import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_PLAINTEXT, encryptPush, newVapidKeys, pushRequest, pushTopic, vapidAuthorization, vapidPublicKey, VAPID_SUBJECT } from '../../server/remote/web-push.js';
import { base64url, fromBase64url } from '../../shared/passkey.js';
import { browserPushKeys, decryptPush as decrypt } from '../helpers/push-receiver.js';

const browserKeys = () => browserPushKeys('https://fcm.googleapis.com/fcm/send/abc');

describe('RFC 8291 encryption', () => {
  it("gives exactly RFC 8291 Appendix A's message for its keys, salt and plaintext", () => {
    const body = encryptPush(
      new TextEncoder().encode('When I grow up, I want to be a watermelon'),
      { endpoint: 'https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV', keys: { p256dh: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4', auth: 'BTBZMqHH6r4Tts7J_aSIgg' } },
      { salt: Buffer.from(fromBase64url('DGv6ra1nlYgDCS1FRnbzlw')), senderPrivate: Buffer.from(fromBase64url('yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw')) },
    );
    expect(base64url(body)).toBe(
      'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
    );
  });

  it('a fresh message decrypts with the subscription\'s keys, and carries none of its text in the clear', () => {
    const keys = browserKeys();
    const text = JSON.stringify({ question: 'Deploy build 812 to staging?' });
    const body = encryptPush(new TextEncoder().encode(text), keys.subscription);
    expect(body.toString('latin1')).not.toContain('Deploy');
    expect(decrypt(body, keys)).toBe(text);
    // Fresh salt and sender key each time: the same text never gives the same bytes.
    expect(encryptPush(new TextEncoder().encode(text), keys.subscription).equals(body)).toBe(false);
    // Another device's keys cannot open it.
    expect(() => decrypt(body, browserKeys())).toThrow();
  });

  it('refuses a payload over one record, a point not on the curve, and an auth secret of the wrong size', () => {
    const keys = browserKeys();
    expect(() => encryptPush(new Uint8Array(MAX_PLAINTEXT + 1), keys.subscription)).toThrow(/at most 3993 bytes/);
    // The largest fits a push service's 4096-byte limit exactly: 86 bytes of header, the record, its delimiter and tag.
    expect(encryptPush(new Uint8Array(MAX_PLAINTEXT), keys.subscription).length).toBe(4096);
    const offCurve = base64url(Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]));
    expect(() => encryptPush(new Uint8Array(1), { ...keys.subscription, keys: { ...keys.subscription.keys, p256dh: offCurve } })).toThrow();
    expect(() => encryptPush(new Uint8Array(1), { ...keys.subscription, keys: { ...keys.subscription.keys, auth: base64url(Buffer.alloc(8)) } })).toThrow(/16 bytes/);
  });
});

describe('VAPID (RFC 8292)', () => {
  it('signs a JWT for the push service\'s origin that its public key verifies, valid 12 hours', () => {
    const keys = newVapidKeys();
    const now = Date.UTC(2026, 11, 5, 12);
    const header = vapidAuthorization(keys, 'https://fcm.googleapis.com/fcm/send/abc', now);
    const match = /^vapid t=([\w-]+)\.([\w-]+)\.([\w-]+), k=([\w-]+)$/.exec(header);
    if (!match) throw new Error(`not a vapid header: ${header}`);
    const [, h = '', c = '', sig = '', k = ''] = match;
    expect(k).toBe(vapidPublicKey(keys));
    expect(JSON.parse(Buffer.from(fromBase64url(h)).toString())).toEqual({ typ: 'JWT', alg: 'ES256' });
    expect(JSON.parse(Buffer.from(fromBase64url(c)).toString())).toEqual({ aud: 'https://fcm.googleapis.com', exp: now / 1000 + 12 * 3600, sub: VAPID_SUBJECT });
    const point = fromBase64url(k);
    const publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: base64url(point.subarray(1, 33)), y: base64url(point.subarray(33)) }, format: 'jwk' });
    expect(verify('sha256', Buffer.from(`${h}.${c}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(fromBase64url(sig)))).toBe(true);
    expect(verify('sha256', Buffer.from(`${h}.${c}x`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(fromBase64url(sig)))).toBe(false);
  });

  it('the POST carries the encrypted body, aes128gcm, a TTL to the expiry (at most a day), high urgency and a topic per request', () => {
    const keys = browserKeys();
    const request = pushRequest({ keys: newVapidKeys(), subscription: keys.subscription, plaintext: new TextEncoder().encode('{}'), ttlSeconds: 1799.6, topic: pushTopic('el_1'), now: Date.now() });
    expect(request.url).toBe(keys.subscription.endpoint);
    expect(request.headers).toMatchObject({ 'Content-Encoding': 'aes128gcm', 'Content-Type': 'application/octet-stream', TTL: '1799', Urgency: 'high' });
    expect(request.headers.Topic).toMatch(/^[\w-]{32}$/);
    expect(pushTopic('el_1')).not.toBe(pushTopic('el_2'));
    expect(decrypt(request.body, keys)).toBe('{}');
    expect(pushRequest({ keys: newVapidKeys(), subscription: keys.subscription, plaintext: new Uint8Array(0), ttlSeconds: 10 * 86_400, topic: 't', now: 0 }).headers.TTL).toBe('86400');
  });
});
