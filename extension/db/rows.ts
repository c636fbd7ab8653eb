import { z } from 'zod';
import { StatusSchema } from '../../shared/lifecycle.js';
import { DecisionRefusalSchema, FieldIssueSchema, type RequestView } from '../../shared/wire-protocol.js';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';
import { searchWords } from '../../shared/search-words.js';

/** What the reviewer decided, as sent (the hub keeps the authoritative copy). */
export const LocalOutcomeSchema = z.strictObject({
  decision: z.enum(['approved', 'rejected']),
  action: z.enum(['submit', 'cancel']).optional(),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).optional(),
  comment: z.string().optional(),
});
export type LocalOutcome = z.infer<typeof LocalOutcomeSchema>;

/** Why the hub did not take a decision; `invalid` keeps the request pending with per-field issues. */
export const RefusalSchema = z.strictObject({ reason: DecisionRefusalSchema, issues: z.array(FieldIssueSchema).optional() });
export type Refusal = z.infer<typeof RefusalSchema>;

/**
 * One request as the extension keeps it: the hub's view plus the reviewer's side of the story (delivery state of the
 * decision, a refusal, a draft). Every row is checked with this schema on the way in and on the way out.
 */
export const RequestRowSchema = z.strictObject({
  elicitationId: z.string().min(1),
  kind: z.enum(['approval', 'proposal']),
  status: StatusSchema,
  message: z.string(),
  words: z.array(z.string()),
  agent: z.string(),
  requester: z.strictObject({ client: z.string().nullable(), pid: z.number() }),
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  request: z.record(z.string(), z.unknown()),
  renderedTemplate: z.string().nullable(),
  outcome: LocalOutcomeSchema.optional(),
  /** queued: waiting in the outbox for the hub; delivered: the hub took it; refused: see `refusal`. */
  delivery: z.enum(['queued', 'delivered', 'refused']).optional(),
  refusal: RefusalSchema.optional(),
});
export type RequestRow = z.infer<typeof RequestRowSchema>;

export const OutboxRowSchema = z.strictObject({
  idempotencyKey: z.string().min(1).max(200),
  elicitationId: z.string().min(1),
  decision: z.enum(['approved', 'rejected']),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).optional(),
  comment: z.string().max(4000).optional(),
  queuedAt: z.number(),
});
export type OutboxRow = z.infer<typeof OutboxRowSchema>;

export const SettingsSchema = z.strictObject({
  port: z.number().int().min(1024).max(65535),
  /** A one-time code from `elicitly-companion pair`, for browsers whose extension origin the hub cannot pin. */
  pairingCode: z.string().max(200),
  notifications: z.boolean(),
  retentionDays: z.number().int().min(1).max(3650),
});
export type Settings = z.infer<typeof SettingsSchema>;
export const DEFAULT_SETTINGS: Settings = { port: DEFAULT_HUB_PORT, pairingCode: '', notifications: true, retentionDays: 90 };

export const ConnectionStateSchema = z.strictObject({
  state: z.enum(['connecting', 'connected', 'reconnecting', 'pairing_needed']),
  /** When the next attempt runs (reconnecting), epoch ms. */
  retryAt: z.number().optional(),
  detail: z.string().optional(),
  since: z.number(),
  /** Once a hub has welcomed this extension, a refused socket means "no hub", not "pairing needed". */
  everConnected: z.boolean().optional(),
});
export type ConnectionState = z.infer<typeof ConnectionStateSchema>;

export function agentName(requester: RequestView['requester']): string {
  return requester.client ?? `MCP server (pid ${requester.pid})`;
}

export function rowFromView(view: RequestView, previous?: RequestRow): RequestRow {
  const row: RequestRow = {
    elicitationId: view.elicitationId,
    kind: view.kind,
    status: view.status,
    message: view.message,
    words: searchWords(view.message),
    agent: agentName(view.requester),
    requester: view.requester,
    createdAt: view.createdAt,
    expiresAt: view.expiresAt,
    request: view.request,
    renderedTemplate: view.renderedTemplate,
  };
  if (view.decidedAt !== undefined) row.decidedAt = view.decidedAt;
  // The reviewer's side survives a re-sent view: the hub does not know about drafts or queued decisions.
  if (previous?.outcome) row.outcome = previous.outcome;
  if (previous?.delivery) row.delivery = previous.delivery;
  if (previous?.refusal) row.refusal = previous.refusal;
  if (view.outcome && !row.outcome) row.outcome = view.outcome;
  return row;
}
