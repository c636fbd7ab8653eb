// What elicit_result hands the agent with a decision: where that decision is in the hub's ledger and what it says, so
// `elicitly-companion audit verify --receipt` can later prove it was recorded as it is, and never changed.
import * as z from 'zod';
import { PasskeyEvidenceSchema } from './passkey-wire.js';


/** A SHA-256 digest in lowercase hex: every hash of the ledger and its receipts, and what was shown (`shownHash`). */
export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hash (64 hex digits)');

export const ReceiptSchema = z.strictObject({
  /** The ledger entry that records the decision. */
  ledgerIndex: z.number().int().nonnegative(),
  /** Where its line is (`ledger/segment-<segment>.jsonl`, byte `offset`): one receipt is checked without reading the ledger whole. */
  at: z.strictObject({ segment: z.number().int().positive(), offset: z.number().int().nonnegative() }).optional(),
  entryHash: Sha256HexSchema,
  /** SHA-256 of the request as stored (canonical JSON of the request and its rendered template). */
  requestHash: Sha256HexSchema,
  /** SHA-256 of what was decided (canonical JSON of the decision, action, values and comment). */
  decisionHash: Sha256HexSchema,
  decidedVia: z.string().min(1).max(40),
  /** The reviewer who decided, on a team's hub: in the ledger's entry, so the receipt's check covers it. */
  decidedBy: z.string().min(1).max(64).optional(),
  decidedAt: z.number().int().nonnegative(),
  /** The newest signed checkpoint that covers the entry when the receipt was made; null: none yet (one comes within a minute). */
  checkpoint: z.strictObject({ index: z.number().int().nonnegative(), hash: Sha256HexSchema }).nullable(),
  /**
   * When the request needed a passkey: the person's assertion, with what its challenge was derived from besides the
   * hashes above (the request's id, the hub's ledger key id). Anyone holding the passkey's public key (the ledger's
   * `passkey.added`, or one pinned from Settings) can check it without trusting the hub.
   */
  passkey: PasskeyEvidenceSchema.extend({ requestId: z.string().min(1).max(200), hub: z.string().regex(/^[0-9a-f]{16}$/) }).optional(),
  /** How to check it. */
  verify: z.string().max(200),
});
export type Receipt = z.infer<typeof ReceiptSchema>;
