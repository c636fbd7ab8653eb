import { randomBytes } from 'node:crypto';
import type { Answer, ApprovalService, CreateParams, Created } from '../shared/approval-calls.js';

/** What a caller files: the request (its `timeoutSeconds` is how long it stays answerable), who asks, where it may be decided. */
export interface DurableRequest {
  request: CreateParams['request'];
  /** `displayTemplate` rendered at creation (approvals and proposals only). */
  renderedTemplate?: string | null;
  /** The requester as the reviewer sees it: the host's name, or the hook's. */
  client: string | null;
  surfaces: NonNullable<CreateParams['surfaces']>;
}

/**
 * Files a request the person answers in a reviewer (the extension, the chat, the phone), on disk at the hub before this
 * answers. The id is made here, by the caller's side: a relay that lost its hub mid-call retries it without a twin.
 * Used by the approval tools, the asks routed to the extension and the hook bridge.
 */
export function createDurableRequest(service: ApprovalService, filed: DurableRequest): Promise<Answer<Created>> {
  return service.call('create', {
    id: `el_${randomBytes(12).toString('base64url')}`,
    request: filed.request,
    renderedTemplate: filed.renderedTemplate ?? null,
    timeoutMs: Math.round(filed.request.timeoutSeconds * 1000),
    requester: { client: filed.client, pid: process.pid },
    surfaces: filed.surfaces,
  });
}
