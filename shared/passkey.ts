// A decision signed by the person's passkey: what every surface and the hub derive the same way, so an authenticator
// signs exactly the values the hub then records (banking's "dynamic linking"). The challenge of a WebAuthn assertion is
// the hash of the request's id, the hash of what was shown and the hash of the decision: change a value after the
// assertion and the hub's recomputed challenge no longer matches. Pure and browser-safe (@noble/hashes, canonicalize).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import canonicalize from 'canonicalize';
import { checkAnswer, type ReviewRequest } from './review-request.js';
import type { FieldIssue } from './field-issues.js';
import { notUnicodeIssue } from './well-formed.js';
import type { Assurance, PasskeyScope } from './passkey-wire.js';

/** Whether a request of this kind, created with this assurance, needs a passkey under the person's setting. */
export function needsPasskey(kind: string, assurance: Assurance | undefined, require: readonly PasskeyScope[]): boolean {
  if (assurance === 'passkey' || require.includes('everything')) return true;
  return (kind === 'permission' && require.includes('permission')) || (kind === 'proposal' && require.includes('proposal'));
}

/** What a decision says, without who or how: what the ledger hashes and what a passkey signs. */
export interface DecisionCore {
  decision: 'approved' | 'rejected';
  action: 'submit' | 'cancel';
  values?: Record<string, unknown>;
  comment?: string;
}

/**
 * The decision the hub will record for these params, or the issues that refuse it: the engine builds its outcome with
 * this, and a surface calls it to learn the exact values its passkey signs (the checked values, not the typed ones).
 */
export function decisionCore(
  request: ReviewRequest,
  params: { decision: 'approved' | 'rejected'; values?: Record<string, unknown>; included?: readonly string[]; comment?: string },
): { ok: true; core: DecisionCore } | { ok: false; issues: FieldIssue[] } {
  const notText = notUnicodeIssue({ values: params.values, comment: params.comment });
  if (notText) return { ok: false, issues: [notText] };
  let core: DecisionCore = { decision: params.decision, action: params.decision === 'approved' ? 'submit' : 'cancel' };
  if (params.comment !== undefined && params.comment.trim() !== '') core = { ...core, comment: params.comment };
  if (params.decision === 'approved') {
    const checked = checkAnswer(request, params.values ?? {}, params.included);
    if (!checked.ok) return { ok: false, issues: checked.issues };
    core = { ...core, values: checked.values };
  }
  return { ok: true, core };
}

function canonical(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('not a JSON value');
  return text;
}

const hex = (text: string): string => bytesToHex(sha256(new TextEncoder().encode(text)));

/** SHA-256 (hex) of what was decided: the ledger's `decisionHash`. */
export function decisionHash(core: DecisionCore): string {
  return hex(canonical({ decision: core.decision, action: core.action, values: core.values ?? null, comment: core.comment ?? null }));
}

export const DECISION_PURPOSE = 'elicitly.decision';
/** What a passkey approves when it approves a change to the passkeys or the setting (not a decision). */
export const MANAGE_PURPOSE = 'elicitly.passkeys';

/** The challenge a passkey signs for one decision: 32 bytes, as base64url (what `clientDataJSON.challenge` holds). */
export function decisionChallenge(input: { hub: string; requestId: string; requestHash: string; decisionHash: string }): string {
  return base64url(sha256(new TextEncoder().encode(canonical({ v: 1, purpose: DECISION_PURPOSE, hub: input.hub, requestId: input.requestId, requestHash: input.requestHash, decisionHash: input.decisionHash }))));
}

/** The challenge a passkey signs to approve a change to the passkeys or the setting: bound to the hub's one-time nonce and to the change. */
export function manageChallenge(input: { hub: string; nonce: string; change: unknown }): string {
  return base64url(sha256(new TextEncoder().encode(canonical({ v: 1, purpose: MANAGE_PURPOSE, hub: input.hub, nonce: input.nonce, change: input.change }))));
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
