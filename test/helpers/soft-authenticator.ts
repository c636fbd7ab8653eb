// A WebAuthn authenticator in node:crypto (P-256, attestation "none"), for tests without a browser: it makes the
// same JSON a browser's `PublicKeyCredential.toJSON()` gives, so the hub's verification runs on real signatures.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { Assertion, Registration } from '../../shared/passkey-wire.js';

const b64u = (bytes: Uint8Array | Buffer): string => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array | string): Buffer => createHash('sha256').update(bytes).digest();

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private counter = 0;

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {
    ({ privateKey: this.privateKey, publicKey: this.publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' }));
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  /** The public key as SPKI DER, base64url: what the hub keeps and the ledger records. */
  get spki(): string {
    return b64u(this.publicKey.export({ format: 'der', type: 'spki' }));
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  register(challenge: string, options: { origin?: string; rpId?: string } = {}): Registration {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(String(jwk.x), 'base64url')],
      [-3, Buffer.from(String(jwk.y), 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([sha256(options.rpId ?? this.rpId), Buffer.from([UP | UV | AT]), Buffer.alloc(4), Buffer.alloc(16), idLength, this.credentialId, Buffer.from(isoCBOR.encode(cose))]);
    const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, string> | Uint8Array>([['fmt', 'none'], ['attStmt', new Map<string, string>()], ['authData', new Uint8Array(authData)]]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64u(this.clientData('webauthn.create', challenge, options.origin ?? this.origin)), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** An assertion over `challenge`; `userVerified: false` is a person who did not unlock the authenticator. */
  assert(challenge: string, options: { userVerified?: boolean; origin?: string } = {}): Assertion {
    this.counter++;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const authenticatorData = Buffer.concat([sha256(this.rpId), Buffer.from([UP | (options.userVerified === false ? 0 : UV)]), count]);
    const clientDataJSON = this.clientData('webauthn.get', challenge, options.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authenticatorData), signature: b64u(signature), userHandle: null },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
