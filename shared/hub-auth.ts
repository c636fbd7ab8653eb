import { NONCE_HEX_LENGTH, PROTOCOL_VERSION } from './wire-fields.js';

/**
 * Mutual authentication on the hub socket, used by the hub, the relays and the extension alike (Web Crypto, which Node
 * and browsers share). Each side proves it knows the shared key by an HMAC over both sides' fresh nonces; the key
 * itself never travels, so whoever answers on the port learns nothing it could replay. The hub proves first, so a
 * process squatting the port gets no proof to test guesses against; and the peer checks that proof before it sends
 * anything else.
 *
 *   peer → hub   hello { nonce: Np, keyId? | pairing? }
 *   hub  → peer  challenge { nonce: Nh, proof: HMAC(K, "elicitly hub v2|protocol|port|role|Np|Nh") }
 *   peer → hub   auth { proof: HMAC(K, "elicitly peer v2|protocol|port|role|Nh|Np") }
 *   hub  → peer  paired { keyId, sealedKey } (pairing only), then welcome
 *
 * K is the install secret for a relay, the extension's paired key for an extension, and the one-time pairing code
 * while pairing; then the hub hands over a fresh key sealed with HMAC(code, "elicitly seal v2|protocol|port|Nh|Np").
 *
 * `port` is the port the hub bound and the port the peer dialled. One state dir (so one key) serves every port, so
 * without it a process squatting port A could pass the real hub's challenge on port B to a peer that dialled A, pass
 * that peer's proof back, and hold an authenticated socket on B: bound to the port, a proof made for A never opens B.
 * The protocol version is bound too, so a proof of one protocol is never accepted under another.
 *
 * The steps are written once per side: the peers' in `hub-handshake.ts`, the hub's in `server/hub/hub-handshake.ts`.
 */

export type AuthRole = 'extension' | 'relay' | 'device';

/**
 * What a proof is made for besides the two nonces: the hub's port and the role. A device (the hub's reviewer page in a
 * phone's browser) reaches the hub through a tunnel or a second listener, so the port it dialled is not the hub's: its
 * proofs are bound to the hub's port (which the page is served with) and to the page's origin, so a proof made for one
 * origin never opens a socket from another.
 */
export type ProofBinding = { port: number; role: 'extension' | 'relay' } | { port: number; role: 'device'; origin: string };

function bound(binding: ProofBinding): string {
  return binding.role === 'device' ? `${binding.port}|device|${binding.origin}` : `${binding.port}|${binding.role}`;
}

const encoder = new TextEncoder();
/** 32 random bytes, hex: the install secret and every paired extension key. */
export const KEY_HEX_LENGTH = 64;
const HEX = /^[0-9a-f]*$/;

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The bytes of an even-length lowercase hex string, or null. */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !HEX.test(hex)) return null;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function newNonce(): string {
  return randomHex(NONCE_HEX_LENGTH / 2);
}

/** A 32-byte key as stored (64 lowercase hex characters); anything shorter, longer or not hex is refused. */
export function isKeyHex(value: unknown): value is string {
  return typeof value === 'string' && value.length === KEY_HEX_LENGTH && HEX.test(value);
}

/**
 * A key as proofs are made with it: its text, or that text imported once as an HMAC key that cannot be exported (what
 * the phone keeps in IndexedDB, so neither a script on its page nor its service worker can read the key back).
 */
export type HubSecret = string | CryptoKey;

/** A paired key's text as a non-extractable HMAC key: the same proofs as the text gives. */
export function importHubSecret(keyHex: string): Promise<CryptoKey> {
  // A key is the UTF-8 text it is stored as (hex for keys, the printed pairing code): the same bytes on every side.
  return crypto.subtle.importKey('raw', encoder.encode(keyHex), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function hmac(key: HubSecret, message: string): Promise<Uint8Array> {
  const imported = typeof key === 'string' ? await importHubSecret(key) : key;
  return new Uint8Array(await crypto.subtle.sign('HMAC', imported, encoder.encode(message)));
}

export async function hubProof(key: HubSecret, binding: ProofBinding, peerNonce: string, hubNonce: string): Promise<string> {
  return toHex(await hmac(key, `elicitly hub v2|${PROTOCOL_VERSION}|${bound(binding)}|${peerNonce}|${hubNonce}`));
}

export async function peerProof(key: HubSecret, binding: ProofBinding, hubNonce: string, peerNonce: string): Promise<string> {
  return toHex(await hmac(key, `elicitly peer v2|${PROTOCOL_VERSION}|${bound(binding)}|${hubNonce}|${peerNonce}`));
}

/** Compares two strings in time that depends only on their length, so a proof cannot be guessed byte by byte. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

async function pad(code: string, port: number, hubNonce: string, peerNonce: string): Promise<Uint8Array> {
  return hmac(code, `elicitly seal v2|${PROTOCOL_VERSION}|${port}|${hubNonce}|${peerNonce}`);
}

/** Seals a fresh 32-byte key for the peer that just proved it knows the pairing code (a one-time pad from the code). */
export async function sealKey(keyHex: string, code: string, port: number, hubNonce: string, peerNonce: string): Promise<string> {
  const key = fromHex(keyHex);
  if (!key || key.length !== 32) throw new Error('sealKey: a key is 32 bytes of hex');
  const mask = await pad(code, port, hubNonce, peerNonce);
  return toHex(key.map((b, i) => b ^ (mask[i] ?? 0)));
}

export async function openSealedKey(sealedHex: string, code: string, port: number, hubNonce: string, peerNonce: string): Promise<string | null> {
  const sealed = fromHex(sealedHex);
  if (!sealed || sealed.length !== 32) return null;
  const mask = await pad(code, port, hubNonce, peerNonce);
  return toHex(sealed.map((b, i) => b ^ (mask[i] ?? 0)));
}

/** How long a pairing code is valid: the CLI and the extension's hint both say this number. */
export const PAIRING_TTL_MINUTES = 10;

/** What `elicitly-companion pair` prints: 12 hex digits (48 bits), valid PAIRING_TTL_MINUTES. */
export const PAIRING_CODE_PATTERN = /^[0-9a-f]{12}$/;

/** What a pairing code looks like when the person types it: any case, spaces and dashes ignored. */
export function normalizePairingCode(typed: string): string {
  return typed.toLowerCase().replace(/[\s-]/g, '');
}
