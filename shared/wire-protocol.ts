import { z } from 'zod';
import { OutcomeSchema, StatusSchema } from './lifecycle.js';

/**
 * Messages between the hub and its peers (the browser extension, and relay server processes), one JSON object per
 * WebSocket text frame. Both ends validate every frame; an invalid one is answered with `error` and the connection
 * stays up. Bump the version on any incompatible change: the hub refuses a hello it does not speak.
 */
export const PROTOCOL_VERSION = 1;

const Id = z.string().min(1).max(100);

/** What a reviewer needs to show one request; the full request as the agent sent it (validated at creation). */
export const RequestViewSchema = z.strictObject({
  elicitationId: Id,
  kind: z.enum(['approval', 'proposal']),
  status: StatusSchema,
  message: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  requester: z.strictObject({ client: z.string().nullable(), pid: z.number() }),
  request: z.looseObject({ kind: z.enum(['approval', 'proposal']), message: z.string() }),
  renderedTemplate: z.string().nullable(),
  outcome: OutcomeSchema.omit({ idempotencyKey: true }).optional(),
});
export type RequestView = z.infer<typeof RequestViewSchema>;

export const FieldIssueSchema = z.strictObject({ path: z.string(), rule: z.string(), message: z.string() });

export const DecisionRefusalSchema = z.enum(['invalid', 'already_decided', 'expired', 'withdrawn', 'not_found']);
export type DecisionRefusal = z.infer<typeof DecisionRefusalSchema>;

const Hello = z.strictObject({
  type: z.literal('hello'),
  protocol: z.number().int(),
  role: z.enum(['extension', 'relay']),
  client: z.strictObject({ name: z.string().max(100), version: z.string().max(50) }),
});
const Heartbeat = z.strictObject({ type: z.literal('heartbeat'), t: z.number() });
const Ack = z.strictObject({ type: z.literal('ack'), elicitationId: Id });
export const DecideMessageSchema = z.strictObject({
  type: z.literal('decide'),
  elicitationId: Id,
  idempotencyKey: z.string().min(1).max(200),
  decision: z.enum(['approved', 'rejected']),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).max(1000).optional(),
  comment: z.string().max(4000).optional(),
});
export type DecideMessage = z.infer<typeof DecideMessageSchema>;

/** Relays forward the approval tools' calls to the hub; the method map mirrors the service interface. */
export const RelayMethodSchema = z.enum(['create', 'status', 'await', 'result', 'cancel', 'reviewer']);
export type RelayMethod = z.infer<typeof RelayMethodSchema>;
const Call = z.strictObject({ type: z.literal('call'), callId: Id, method: RelayMethodSchema, params: z.record(z.string(), z.unknown()) });

export const PeerMessageSchema = z.discriminatedUnion('type', [Hello, Heartbeat, Ack, DecideMessageSchema, Call]);
export type PeerMessage = z.infer<typeof PeerMessageSchema>;

const Welcome = z.strictObject({ type: z.literal('welcome'), protocol: z.literal(PROTOCOL_VERSION), hubPid: z.number(), pending: z.array(RequestViewSchema) });
const Created = z.strictObject({ type: z.literal('request.created'), request: RequestViewSchema });
const Updated = z.strictObject({ type: z.literal('request.updated'), elicitationId: Id, status: StatusSchema });
const Removed = z.strictObject({ type: z.literal('request.removed'), elicitationId: Id, status: StatusSchema });
const DecisionResult = z.strictObject({
  type: z.literal('decision.result'),
  elicitationId: Id,
  idempotencyKey: z.string(),
  ok: z.boolean(),
  status: StatusSchema.optional(),
  reason: DecisionRefusalSchema.optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
const CallResult = z.strictObject({
  type: z.literal('call.result'),
  callId: Id,
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
});
const ErrorMessage = z.strictObject({ type: z.literal('error'), code: z.enum(['invalid_message', 'unsupported_protocol', 'rate_limited', 'not_hello', 'forbidden']), message: z.string() });

export const HubMessageSchema = z.discriminatedUnion('type', [Welcome, Created, Updated, Removed, DecisionResult, CallResult, ErrorMessage, Heartbeat]);
export type HubMessage = z.infer<typeof HubMessageSchema>;

/** Subprotocol names carry credentials because browsers cannot set headers on a WebSocket. */
export const SUBPROTOCOL = 'elicitly.v1';
export const RELAY_AUTH_PREFIX = 'auth.';
export const PAIRING_PREFIX = 'pair.';

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

export function parseFrame<T>(schema: z.ZodType<T>, data: string): Parsed<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const result = schema.safeParse(raw);
  return result.success ? { ok: true, message: result.data } : { ok: false, error: firstIssue(result.error) };
}

/** The first problem of a refused message, naming the field, for the peer to act on. */
export function firstIssue(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || '(message)'}: ${first.message}` : 'invalid message';
}
