import * as z from 'zod';
import { FieldIssueSchema } from './field-issues.js';
import { StatusSchema } from './lifecycle.js';
import { AssertionSchema } from './passkey-wire.js';
import { Sha256HexSchema } from './receipt.js';
import { RuleDraftSchema } from './rules.js';

/**
 * The small shapes both the hub protocol and the extension's own storage and page messages use. Kept apart from
 * `wire-protocol.ts` so the extension's pages, which never speak to the hub, do not carry its whole protocol.
 */
/**
 * The hub protocol's version (wire-protocol.ts: messages between the hub and its peers, the browser extension and relay
 * server processes, one JSON object per WebSocket text frame; both ends validate every frame). Bump it on any
 * incompatible change: the hub closes a peer that says another version with `CLOSE_PROTOCOL_MISMATCH`, and the peer
 * tells its user which side to update. Here, not there, so the handshake's crypto (hub-auth.ts) needs no message shape.
 */
export const PROTOCOL_VERSION = 15;

/** 32 random bytes, hex: each side's fresh nonce in the handshake (`hub-auth.ts`). */
export const NONCE_HEX_LENGTH = 64;

export const ElicitationIdSchema = z.string().min(1).max(100);
export const RequesterSchema = z.strictObject({ client: z.string().nullable(), pid: z.number() });
export const IdempotencyKeySchema = z.string().min(1).max(200);
/** What a paired phone (or any browser that opened the hub's reviewer page) is called in `pair --list`. */
export const DeviceNameSchema = z.string().trim().min(1).max(60).regex(/^[^\p{Cc}]*$/u, 'must not hold control characters');

/**
 * What an exported relay key may do beyond filing and reading its own requests, granted by name at export
 * (`key export --allow <grant>`): `permission`, file a host's own permission prompts (a hook on that machine).
 */
export const GRANTS = ['permission'] as const;
export const GrantSchema = z.enum(GRANTS);
export type Grant = z.infer<typeof GrantSchema>;

export const KeyIdSchema = z.string().regex(/^k_[0-9a-f]{16}$/, 'must be a key id (k_ and 16 hex digits)');

/** Why a decision was refused. One the hub could not record at all is the call's error `unavailable`, never one of these. */
export const DecisionRefusalSchema = z.enum(['invalid', 'already_decided', 'expired', 'withdrawn', 'not_found', 'shown_mismatch', 'passkey_required', 'passkey_invalid']);
export type DecisionRefusal = z.infer<typeof DecisionRefusalSchema>;

/**
 * The engine's answer to any decision, whichever surface made it: the `decide` call's result (`peer-calls.ts`), which
 * the view in the chat reads too.
 */
export const DecisionAnswerSchema = z.strictObject({
  ok: z.boolean(),
  status: StatusSchema.optional(),
  reason: DecisionRefusalSchema.optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
export type DecisionAnswer = z.infer<typeof DecisionAnswerSchema>;

/**
 * A decision, as every surface sends it (the `decide` call's params). Which surface made it is never a field: the hub
 * takes it from the socket's proven key (`peer-calls.ts`).
 */
export const DecideParamsSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  idempotencyKey: IdempotencyKeySchema,
  decision: z.enum(['approved', 'rejected']),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).max(1000).optional(),
  comment: z.string().max(4000).optional(),
  /**
   * A rule the person saved with this decision ("Always allow … in this project"); its effect matches the decision.
   * Only the extension's own socket may carry one: rules are the person's, never an agent's.
   */
  rule: RuleDraftSchema.optional(),
  /**
   * SHA-256 of what the reviewer was shown (`shared/shown-hash.ts`); the hub refuses the decision when it is not the
   * stored request's (`shown_mismatch`). Every surface of this version sends it; a decision without one (a script, a
   * test) is checked as before.
   */
  shownHash: Sha256HexSchema.optional(),
  /**
   * For a request that needs a passkey: the person's WebAuthn assertion whose challenge is `decisionChallenge` of this
   * request and of exactly this decision (`shared/passkey.ts`). Without it such a decision is refused
   * (`passkey_required`); one over anything else is refused too (`passkey_invalid`).
   */
  passkey: AssertionSchema.optional(),
});
export type DecideParams = z.infer<typeof DecideParamsSchema>;
