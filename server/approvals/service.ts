import { z } from 'zod';
import type { Status } from '../../shared/lifecycle.js';

/** What the approval tools need, whether this process is the hub or a relay forwarding to it. */
export const ServiceErrorCodeSchema = z.enum([
  'not_found',
  'pending',
  'expired',
  'canceled',
  'already_decided',
  'already_canceled',
  'invalid',
  'unavailable',
]);
export type ServiceErrorCode = z.infer<typeof ServiceErrorCodeSchema>;

export interface ServiceError {
  code: ServiceErrorCode;
  message: string;
}

export type Answer<T> = { ok: true; value: T } | { ok: false; error: ServiceError };

export const CreateParamsSchema = z.strictObject({
  id: z.string().min(1).max(100),
  kind: z.enum(['approval', 'proposal']),
  request: z.looseObject({ kind: z.enum(['approval', 'proposal']), message: z.string() }),
  renderedTemplate: z.string().nullable(),
  timeoutMs: z.number().int().positive(),
  requester: z.strictObject({ client: z.string().nullable(), pid: z.number() }),
});
export type CreateParams = z.infer<typeof CreateParamsSchema>;

export interface Created {
  elicitationId: string;
  status: 'pending';
  expiresAt: string;
  reviewer: { connected: boolean };
}

export const IdParamsSchema = z.strictObject({ id: z.string().min(1).max(100) });
export const AwaitParamsSchema = z.strictObject({ id: z.string().min(1).max(100), waitMs: z.number().int().positive() });

export interface ApprovalService {
  create(params: CreateParams): Promise<Answer<Created>>;
  status(id: string): Promise<Answer<{ status: Status }>>;
  await(id: string, waitMs: number, signal?: AbortSignal): Promise<Answer<{ status: Status }>>;
  result(id: string): Promise<Answer<Record<string, unknown>>>;
  cancel(id: string): Promise<Answer<{ status: 'canceled' }>>;
}

export const fail = (code: ServiceErrorCode, message: string): { ok: false; error: ServiceError } => ({ ok: false, error: { code, message } });
