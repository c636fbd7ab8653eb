import * as z from 'zod';
import { StatusSchema } from '../shared/lifecycle.js';
import { RuleIdSchema, type RuleDraft } from '../shared/rules.js';
import { FieldIssueSchema } from '../shared/field-issues.js';
import { DecideParamsSchema, DecisionRefusalSchema } from '../shared/wire-fields.js';
import type { Assertion } from '../shared/passkey-wire.js';
import { LocalOutcomeSchema } from './rows/rows.js';

/**
 * What a reviewer surface's views ask of their side (the extension's background, the phone's socket, the chat host) and
 * the answers they get: the decisions, rule changes and passkey calls, validated on arrival like every other boundary.
 */
// The hub's decide without the idempotency key: the side that sends it mints one per decision, the view never reuses one.
export const DecisionSchema = DecideParamsSchema.omit({ idempotencyKey: true });
/** A decision as a view makes it. */
export type Decision = z.infer<typeof DecisionSchema>;

/** The hub's passkey calls a view may make through its side. */
export const PASSKEY_METHODS = ['passkey.info', 'passkey.nonce', 'passkey.register', 'passkey.remove', 'passkey.require'] as const;
export type PasskeyMethod = (typeof PASSKEY_METHODS)[number];

/**
 * The background's answer to `decide`: what the hub said, or that the decision waits in the outbox; or, without asking
 * the hub, that this browser already decided the request (another popup or tab did: the first decision stands), or
 * that the decision is over the hub's frame limit (the issue names the field to shorten).
 */
export const DecideReplySchema = z.discriminatedUnion('state', [
  z.strictObject({
    state: z.literal('answered'),
    ok: z.boolean(),
    status: StatusSchema.optional(),
    reason: DecisionRefusalSchema.optional(),
    issues: z.array(FieldIssueSchema).optional(),
  }),
  z.strictObject({ state: z.literal('queued') }),
  z.strictObject({ state: z.literal('already_decided_here'), decision: LocalOutcomeSchema, delivery: z.enum(['queued', 'delivered']) }),
  z.strictObject({ state: z.literal('too_large'), issues: z.array(FieldIssueSchema) }),
  z.strictObject({ state: z.literal('error'), message: z.string() }),
]);
export type DecideReply = z.infer<typeof DecideReplySchema>;

/**
 * The background's answer to a rule change: what the hub said (with the saved rule's id), or why it was not asked
 * (no hub connected: a rule change is not queued like a decision, the person sees it did not happen), or that it did
 * not answer in time (the list then shows whatever the hub did).
 */
export const RuleReplySchema = z.discriminatedUnion('state', [
  z.strictObject({ state: z.literal('answered'), ok: z.boolean(), id: RuleIdSchema.optional(), issues: z.array(FieldIssueSchema).optional() }),
  z.strictObject({ state: z.literal('not_connected') }),
  z.strictObject({ state: z.literal('no_answer') }),
  z.strictObject({ state: z.literal('error'), message: z.string() }),
]);
export type RuleReply = z.infer<typeof RuleReplySchema>;

/**
 * The background's answer to a passkey call: the hub's result (checked by the page against that call's schema), the
 * hub's error, or why it was not asked. Like a rule change, never queued: a ceremony needs the hub now.
 */
export const PasskeyReplySchema = z.union([
  z.strictObject({ state: z.literal('answered'), ok: z.literal(true), value: z.unknown() }),
  z.strictObject({ state: z.literal('answered'), ok: z.literal(false), code: z.string(), message: z.string() }),
  z.strictObject({ state: z.literal('not_connected') }),
  z.strictObject({ state: z.literal('no_answer') }),
  z.strictObject({ state: z.literal('error'), message: z.string() }),
]);
export type PasskeyReply = z.infer<typeof PasskeyReplySchema>;

/** How a review sends its decision: all the review components need of the surface that shows them. */
export type Decide = (decision: Decision) => Promise<DecideReply>;

/**
 * What a surface's views need from its side: the extension's pages implement it over runtime messaging to the
 * background (extension/ui/runtime-client.ts), the phone over its socket (phone/phone-session.ts), tests with a fake.
 */
export interface ReviewerClient {
  decide: Decide;
  reconnect(): Promise<void>;
  /**
   * Only the extension's own client has these: rules are the person's, made in the extension. A surface without them
   * (the review inside the chat, whose decisions can never carry a rule) offers no "Always allow…".
   */
  /** `approval`: a passkey's over this save, when the person's setting asks for one (`passkey-ceremony.ts` `approveRule`). */
  saveRule?(id: string | undefined, rule: RuleDraft, approval?: { nonce: string; proof: Assertion }): Promise<RuleReply>;
  deleteRule?(id: string): Promise<RuleReply>;
  /** Tells the hub this review is on the person's screen, rendered to this hash (surfaces with a socket of their own). */
  shown?(elicitationId: string, shownHash: string): void;
  /**
   * A page's own ability, not the background's: asks the person for host permissions. Firefox lets an extension page
   * use WebAuthn only with an RP ID its host permissions cover (`elicitly.localhost`), asked when a passkey is added.
   */
  grantOrigins?(origins: string[]): Promise<boolean>;
  /** Only the extension's own client: the person's passkeys are registered and used in its pages. */
  passkey?(method: PasskeyMethod, params: Record<string, unknown>): Promise<PasskeyReply>;
}
