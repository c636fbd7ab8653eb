import { createHmac } from 'node:crypto';
import { agentName, kindWord, type NotificationType } from '../../shared/push-notice.js';
import type { RequestKind } from '../../shared/review-request.js';
import type { RemoteConfig } from '../remote-config.js';
import { PHONE_PATH } from '../remote-config.js';

/**
 * What a notification says, built from the few fields of a request that are not its content: who asked (the MCP
 * client's name), what sort of thing it is, its id and its times. The request's message, context, values, template and
 * tool input never reach these functions, so no notification can carry them.
 */

/** The fields a notification may use; nothing else of a request is passed in. */
export interface NotifiedRequest {
  elicitationId: string;
  kind: RequestKind;
  /** The MCP client's own name (`requester.client`), as it introduced itself: untrusted text. */
  client: string | null;
  createdAt: number;
  expiresAt: number;
}

/** A self-hosted ntfy server's own rule for topic names; anything else is a configuration we cannot publish to. */
const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

/** The review's link on the phone page: at the first origin the person configured, else loopback on the hub's port. */
export function reviewUrl(config: RemoteConfig, port: number, elicitationId: string): string {
  const origin = config.origins[0] ?? `http://127.0.0.1:${port}`;
  return `${origin}${PHONE_PATH}#/r/${encodeURIComponent(elicitationId)}`;
}

export function title(type: NotificationType, request: NotifiedRequest, now: number): string {
  const agent = agentName(request.client);
  if (type === 'request.waiting') return `Approval waiting from ${agent}`;
  if (type === 'request.reminder') return `Still waiting: approval from ${agent}`;
  const minutes = Math.max(1, Math.ceil((request.expiresAt - now) / 60_000));
  return `Expires in ${minutes} min: approval from ${agent}`;
}

export const MESSAGE = 'Open the review to see it.';

/**
 * The ntfy JSON publish call for a topic URL (`https://ntfy.sh/<topic>`, or a self-hosted server under a path): posted
 * to the server's root with the topic in the body, so the title travels as UTF-8 JSON rather than as a header, which
 * ntfy requires to be ASCII. null when the URL's last path segment (a trailing slash aside) is not a topic name.
 */
export function ntfyPublish(
  topicUrl: string,
  fields: { title: string; click: string; kind: string; priority: number },
): { url: string; body: string } | null {
  const url = new URL(topicUrl);
  const segments = url.pathname.replace(/\/+$/, '').split('/');
  const topic = segments.pop() ?? '';
  if (!TOPIC.test(topic)) return null;
  const root = `${url.origin}${segments.join('/')}/`;
  return { url: root, body: JSON.stringify({ topic, title: fields.title, message: MESSAGE, click: fields.click, tags: [fields.kind], priority: fields.priority }) };
}

export function webhookBody(type: NotificationType, request: NotifiedRequest, url: string, sentAt: number): string {
  return JSON.stringify({
    type,
    elicitationId: request.elicitationId,
    agent: agentName(request.client),
    kind: kindWord(request.kind),
    url,
    createdAt: new Date(request.createdAt).toISOString(),
    expiresAt: new Date(request.expiresAt).toISOString(),
    sentAt: new Date(sentAt).toISOString(),
  });
}

/**
 * The webhook's `X-Elicitly-Signature`: HMAC-SHA256 keyed with the secret (its 64 hex digits as text) over
 * `<X-Elicitly-Timestamp>.<raw body>`, so a receiver can tell the body is ours and fresh (docs/security.md).
 */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
