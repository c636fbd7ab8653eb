// What a push notification on the person's phone says and offers, from a request's view: the hub builds it (and
// encrypts it to each subscribed device, `server/remote/web-push.ts`), the phone's service worker shows it and sends
// the decision an action carries. Only a request whose whole question fits on a notification, unclipped and with
// nothing hidden, gets actions; the rest open the review on tap.
import * as z from 'zod';
import { DecideParamsSchema, ElicitationIdSchema } from './wire-fields.js';
import { Sha256HexSchema } from './receipt.js';
import type { RequestKind, RequestView } from './review-request.js';

export const NotificationTypeSchema = z.enum(['request.waiting', 'request.reminder', 'request.expiring']);
export type NotificationType = z.infer<typeof NotificationTypeSchema>;

/**
 * A browser's push subscription as `PushSubscription.toJSON()` gives it. The endpoint is the push service's URL for
 * this one device; the hub posts to it, so which hosts it may name is checked (`pushEndpointProblem`).
 */
export const PushSubscriptionSchema = z.strictObject({
  endpoint: z.string().min(1).max(2000),
  expirationTime: z.number().nullable().optional(),
  keys: z.strictObject({ p256dh: z.string().regex(/^[A-Za-z0-9_-]{87}$/, 'must be a P-256 point, base64url'), auth: z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'must be 16 bytes, base64url') }),
});
export type PushSubscription = z.infer<typeof PushSubscriptionSchema>;

/** The push services of the browsers that have one (Chrome and Android, Firefox, Safari and iOS, Edge). */
const PUSH_SERVICE_HOSTS = ['fcm.googleapis.com', 'android.googleapis.com', 'push.services.mozilla.com', 'push.apple.com', 'notify.windows.com'];

/**
 * Why the hub will not post to this endpoint, or null. It must be https on a known push service (or below one of its
 * hosts), or exactly one of the origins the person configured (a self-hosted push service): a paired page must not be
 * able to make the hub post to anything else on the network.
 */
export function pushEndpointProblem(endpoint: string, extraOrigins: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be a URL';
  }
  if (extraOrigins.includes(url.origin)) return null;
  if (url.protocol !== 'https:') return 'must be https://';
  const host = url.hostname.toLowerCase();
  if (!PUSH_SERVICE_HOSTS.some((known) => host === known || host.endsWith(`.${known}`))) return `must be a browser's push service (${PUSH_SERVICE_HOSTS.join(', ')}) or one listed in ELICITLY_PUSH_SERVICES`;
  return null;
}

/** A decision a notification's action carries, exactly as the worker sends it (the id and key are added then). */
export const PushDecisionSchema = DecideParamsSchema.pick({ decision: true, values: true });
export type PushDecision = z.infer<typeof PushDecisionSchema>;

export const PushActionSchema = z.strictObject({ action: z.enum(['approve', 'deny']), title: z.string().min(1).max(40), decision: PushDecisionSchema });
export type PushAction = z.infer<typeof PushActionSchema>;

/** The notification's limits: what a phone shows of a notification without the person opening anything. */
export const NOTICE_LIMITS = { title: 120, body: 240, lines: 6, action: 24 } as const;

/** What one push message carries, encrypted; the worker reads it through this schema. */
export const PushPayloadSchema = z.strictObject({
  v: z.literal(1),
  type: NotificationTypeSchema,
  elicitationId: ElicitationIdSchema,
  title: z.string().max(NOTICE_LIMITS.title * 2),
  body: z.string().max(NOTICE_LIMITS.body * 4),
  /** SHA-256 of the request as the hub stored it when it sent this: an action's decision is refused if it changed. */
  shownHash: Sha256HexSchema,
  /** Empty: the request does not fit on a notification (or needs a passkey); a tap opens its review. */
  actions: z.array(PushActionSchema).max(2),
  expiresAt: z.number(),
});
export type PushPayload = z.infer<typeof PushPayloadSchema>;

const AGENT_MAX = 60;

/** Text a notification may show: format characters (bidi overrides, zero-width) removed, control characters made spaces. */
function clean(text: string, keepNewlines: boolean): string {
  const noFormat = text.replace(/\p{Cf}/gu, '');
  if (!keepNewlines) return noFormat.replace(/[\s\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ');
  return noFormat.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, (c) => (c === '\n' ? c : ' '));
}

/**
 * The agent's name as a notification shows it: the client chose it, so line breaks, bidi overrides and zero-width
 * characters (which could forge or hide a title on a lock screen) are removed, and it is clipped.
 */
export function agentName(client: string | null): string {
  const name = clean(client ?? '', false).trim();
  const chars = Array.from(name);
  const clipped = chars.length > AGENT_MAX ? `${chars.slice(0, AGENT_MAX - 1).join('')}…` : name;
  return clipped === '' ? 'an agent' : clipped;
}

/** The one word a notification may say about what is asked. */
export function kindWord(kind: RequestKind): 'approval' | 'question' | 'permission' {
  if (kind === 'permission') return 'permission';
  return kind === 'approval' || kind === 'proposal' ? 'approval' : 'question';
}

const CAPITAL = { approval: 'Approval', question: 'Question', permission: 'Permission' } as const;

export function noticeTitle(type: NotificationType, kind: RequestKind, client: string | null, expiresAt: number, now: number): string {
  const what = `${kindWord(kind)} from ${agentName(client)}`;
  if (type === 'request.waiting') return `${CAPITAL[kindWord(kind)]} from ${agentName(client)}`;
  if (type === 'request.reminder') return `Still waiting: ${what}`;
  const minutes = Math.max(1, Math.ceil((expiresAt - now) / 60_000));
  return `Expires in ${minutes} min: ${what}`;
}

/** A flat JSON context as "label: value" lines; null when it is not flat (nested values need the review). */
function contextLines(context: unknown): string[] | null {
  if (context === null || context === undefined) return [];
  if (typeof context !== 'object' || Array.isArray(context)) return null;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(context)) {
    if (value !== null && typeof value === 'object') return null;
    lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return lines;
}

/** What the body says below the question, and whether the whole request is in it; null: not something a notification decides. */
function detail(view: RequestView): { lines: string[]; actions: [PushAction, PushAction] } | null {
  const { request } = view;
  if (request.kind === 'confirm') {
    return {
      lines: [],
      actions: [
        { action: 'approve', title: request.labels.yes, decision: { decision: 'approved', values: { confirmed: true } } },
        { action: 'deny', title: request.labels.no, decision: { decision: 'approved', values: { confirmed: false } } },
      ],
    };
  }
  if (request.kind === 'approval') {
    if (request.mode !== 'json' || request.requestedSchema !== null || view.renderedTemplate !== null) return null;
    const lines = contextLines(request.context);
    if (lines === null) return null;
    return {
      lines,
      actions: [
        { action: 'approve', title: request.labels.ok, decision: { decision: 'approved' } },
        { action: 'deny', title: request.labels.cancel, decision: { decision: 'rejected' } },
      ],
    };
  }
  if (request.kind === 'permission') {
    // An edit's diff does not fit a notification; a command, a path or a tool's short input does.
    if (request.diff !== undefined) return null;
    const what = request.command !== undefined ? [`$ ${request.command}`] : request.path !== undefined ? [request.path] : contextLines(request.input);
    if (what === null) return null;
    return {
      lines: [`${request.tool}${request.mcp ? ` (${request.mcp.server})` : ''}`, ...what],
      actions: [
        { action: 'approve', title: 'Allow', decision: { decision: 'approved' } },
        { action: 'deny', title: 'Deny', decision: { decision: 'rejected' } },
      ],
    };
  }
  return null;
}

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/**
 * The notification for one request. Actions only when the person sees all of it: the question and its detail
 * unclipped, within NOTICE_LIMITS, with no character the notification would drop or change, action titles that fit,
 * and no passkey needed (a notification cannot sign). Otherwise the body is clipped and a tap opens the review.
 */
export function pushNotice(view: RequestView, type: NotificationType, shownHash: string, now: number): PushPayload {
  const found = detail(view);
  const lines = [view.message, ...(found?.lines ?? [])].map((line) => line.trim()).filter((line) => line !== '');
  const raw = lines.join('\n');
  const body = clean(raw, true);
  const fits =
    found !== null &&
    view.assurance !== 'passkey' &&
    body === raw &&
    Array.from(body).length <= NOTICE_LIMITS.body &&
    lines.length <= NOTICE_LIMITS.lines &&
    found.actions.every((a) => Array.from(a.title).length <= NOTICE_LIMITS.action && clean(a.title, false) === a.title);
  return {
    v: 1,
    type,
    elicitationId: view.elicitationId,
    title: clip(noticeTitle(type, view.kind, view.requester.client, view.expiresAt, now), NOTICE_LIMITS.title),
    body: fits ? body : clip(body, NOTICE_LIMITS.body),
    shownHash,
    actions: fits ? found.actions : [],
    expiresAt: view.expiresAt,
  };
}
