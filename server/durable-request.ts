import { randomFillSync } from 'node:crypto';
import type { Answer, ApprovalService, CreateParams, Created } from '../shared/peer-calls.js';

/** What a caller files: the request (its `timeoutSeconds` is how long it stays answerable), who asks, where it may be decided. */
export interface DurableRequest {
  /** Made by the caller when it must be known beforehand (a hook's prompt, by its tool call); else a fresh one. */
  id?: string;
  request: CreateParams['request'];
  /** `displayTemplate` rendered at creation (approvals and proposals only). */
  renderedTemplate?: string | null;
  /** The requester as the reviewer sees it: the host's name, or the hook's. */
  client: string | null;
  surfaces: NonNullable<CreateParams['surfaces']>;
  /** Withdrawn when the connection that files it closes (`CreateParams.bound`). */
  bound?: true;
  assurance?: CreateParams['assurance'];
}

const ID_BYTES = 12;
/** Random bytes drawn ahead for many ids: one call into the generator per 256 creates instead of one per create. */
const pool = Buffer.alloc(ID_BYTES * 256);
let poolOffset = pool.length;

/** A fresh request id: 96 random bits, base64url. */
export function newElicitationId(): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = pool.toString('base64url', poolOffset, poolOffset + ID_BYTES);
  poolOffset += ID_BYTES;
  return `el_${id}`;
}

/**
 * Files a request the person answers in a reviewer (the extension, the chat, the phone), on disk at the hub before this
 * answers. The id is made here, by the caller's side: a relay that lost its hub mid-call retries it without a twin.
 * Used by the approval tools, the asks routed to the extension and the hook bridge.
 */
export function createDurableRequest(service: ApprovalService, filed: DurableRequest): Promise<Answer<Created>> {
  return service.call('create', {
    id: filed.id ?? newElicitationId(),
    request: filed.request,
    renderedTemplate: filed.renderedTemplate ?? null,
    timeoutMs: Math.round(filed.request.timeoutSeconds * 1000),
    requester: { client: filed.client, pid: process.pid },
    surfaces: filed.surfaces,
    ...(filed.bound ? { bound: true } : {}),
    ...(filed.assurance ? { assurance: filed.assurance } : {}),
  });
}
