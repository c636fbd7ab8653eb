import { describe, expect, it } from 'vitest';
import { constantTimeEqual, hubProof, newNonce, openSealedKey, peerProof, sealKey } from '../../shared/hub-auth.js';
import type { ProofBinding } from '../../shared/hub-auth.js';

const key = 'ab'.repeat(32);
const peerNonce = newNonce();
const hubNonce = newNonce();
const base: ProofBinding = { port: 17391, role: 'extension' };

describe('finding 1: every proof and the seal are bound to the port', () => {
  it.each<[string, ProofBinding]>([
    ['another port', { port: 17392, role: 'extension' }],
    ['another role', { port: 17391, role: 'relay' }],
  ])('a proof made for %s never matches', async (_name, other) => {
    expect(await hubProof(key, base, peerNonce, hubNonce)).not.toBe(await hubProof(key, other, peerNonce, hubNonce));
    expect(await peerProof(key, base, hubNonce, peerNonce)).not.toBe(await peerProof(key, other, hubNonce, peerNonce));
  });

  it('the same binding, key and nonces make the same proof, and hub and peer proofs differ', async () => {
    expect(constantTimeEqual(await hubProof(key, base, peerNonce, hubNonce), await hubProof(key, { ...base }, peerNonce, hubNonce))).toBe(true);
    expect(await hubProof(key, base, peerNonce, hubNonce)).not.toBe(await peerProof(key, base, peerNonce, hubNonce));
  });

  it('a key sealed for one port opens to the key on that port only', async () => {
    const fresh = 'cd'.repeat(32);
    const sealed = await sealKey(fresh, '0123456789ab', 17391, hubNonce, peerNonce);
    expect(await openSealedKey(sealed, '0123456789ab', 17391, hubNonce, peerNonce)).toBe(fresh);
    expect(await openSealedKey(sealed, '0123456789ab', 17392, hubNonce, peerNonce)).not.toBe(fresh);
  });
});
