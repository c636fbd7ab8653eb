import * as z from 'zod';
import { RuleDraftSchema, RuleIdSchema } from '../shared/rules.js';
import { ElicitationIdSchema } from '../shared/wire-fields.js';
import { Sha256HexSchema } from '../shared/receipt.js';
import { AssertionSchema } from '../shared/passkey-wire.js';
import { DecisionSchema, PASSKEY_METHODS } from '../kit/messages.js';

/**
 * Messages from the extension's pages to its background (runtime messaging), validated on arrival like every other
 * boundary. Pages read state from IndexedDB directly; they only ask the background to act.
 */
export const UiMessageSchema = z.discriminatedUnion('type', [
  // A decision (the background mints its idempotency key).
  DecisionSchema.extend({ type: z.literal('decide') }),
  // Settings changed (port, pairing code): drop the socket and connect again now.
  z.strictObject({ type: z.literal('reconnect') }),
  // A page opened: make sure the worker is awake and connecting.
  z.strictObject({ type: z.literal('wake') }),
  // The Rules view: save a rule (no id: a new one; an id: replaces that rule whole) or delete one, through the hub.
  z.strictObject({ type: z.literal('rule.save'), id: RuleIdSchema.optional(), rule: RuleDraftSchema, approval: z.strictObject({ nonce: z.string().max(100), proof: AssertionSchema }).optional() }),
  z.strictObject({ type: z.literal('rule.delete'), id: RuleIdSchema }),
  // A review shows a pending request to the person: the hub's ledger records it (`request.shown`), once.
  z.strictObject({ type: z.literal('shown'), elicitationId: ElicitationIdSchema, shownHash: Sha256HexSchema }),
  // Settings and a review needing a passkey: one of the hub's passkey calls, passed through (the hub checks the params).
  z.strictObject({ type: z.literal('passkey'), method: z.enum(PASSKEY_METHODS), params: z.record(z.string(), z.unknown()) }),
]);
export type UiMessage = z.infer<typeof UiMessageSchema>;
