import * as z from 'zod';
import { isKeyHex } from '../shared/hub-auth.js';

/**
 * The reviewer page the hub serves to phones (`elicitly-companion remote …`), kept in `remote.json` in the state dir:
 * written by the CLI, read by the hub on every request, so a change takes effect without a restart. Off unless the
 * person enabled it.
 */

/** A browser origin the person reaches the hub's page from: `https://host[:port]`, nothing after it. */
export const RemoteOriginSchema = z.string().max(200).superRefine((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be an origin such as https://desk.tail1234.ts.net' });
    return;
  }
  // A phone's browser has Web Crypto (the handshake) only in a secure context: https, or loopback (an SSH tunnel).
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) ctx.addIssue({ code: 'custom', message: 'must be https:// (http:// only for localhost)' });
  else if (url.origin !== value) ctx.addIssue({ code: 'custom', message: `must be an origin alone, with no path, query or trailing slash (${url.origin})` });
});

const HttpUrlSchema = z.string().max(500).refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

export const NtfySchema = z.strictObject({
  /** The topic's URL, e.g. https://ntfy.sh/<topic> or a self-hosted server's; the topic name is the only secret ntfy.sh has. */
  url: HttpUrlSchema,
  /** An access token for a server that requires one (sent as `Authorization: Bearer`). */
  token: z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII with no spaces').optional(),
});

export const WebhookSchema = z.strictObject({
  url: HttpUrlSchema,
  /** HMAC-SHA256 key of the `X-Elicitly-Signature` header: made by the CLI, shown once to the person. */
  secret: z.string().refine(isKeyHex, 'must be 64 lowercase hex digits'),
});

export const RemoteConfigSchema = z.strictObject({
  version: z.literal(1),
  enabled: z.boolean(),
  /** Besides loopback (always allowed while enabled): the origins the page is reached at, exactly. */
  origins: z.array(RemoteOriginSchema).max(8),
  ntfy: NtfySchema.optional(),
  webhook: WebhookSchema.optional(),
  /** A reminder this long after a request arrived and is still waiting; 0: none. */
  remindMinutes: z.number().min(0).max(1440),
  /** One more this long before a waiting request expires; 0: none. */
  beforeExpiryMinutes: z.number().min(0).max(1440),
});
export type RemoteConfig = z.infer<typeof RemoteConfigSchema>;

export const REMOTE_OFF: RemoteConfig = { version: 1, enabled: false, origins: [], remindMinutes: 10, beforeExpiryMinutes: 5 };

/** The page's path on the hub. */
export const PHONE_PATH = '/phone/';

/**
 * Which of the hub's listeners a request came in on: its own port on 127.0.0.1 (agents, the extension, and a phone
 * through a tunnel that ends on loopback), or the HTTPS listener of `ELICITLY_REMOTE_LISTEN` (a phone on the network).
 */
export type Listener = 'loopback' | 'network';

/**
 * Every origin the page and a device's socket may come from while enabled. On loopback: loopback on the hub's port,
 * then the configured ones (a tunnel's name); on the network listener only the configured ones.
 */
export function allowedOrigins(config: RemoteConfig, port: number, listener: Listener = 'loopback'): string[] {
  if (!config.enabled) return [];
  // `elicitly.localhost`: the name a page can use WebAuthn on (an IP address is no RP ID); browsers resolve every
  // `*.localhost` to loopback themselves, so no DNS answer can point it elsewhere.
  return listener === 'network' ? [...config.origins] : [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://elicitly.localhost:${port}`, ...config.origins];
}

/**
 * The Host headers the hub answers: on loopback, loopback on its port (and each configured origin's host while
 * enabled); on the network listener only the configured origins' hosts, and nothing while the page is off.
 */
export function allowedHosts(config: RemoteConfig, port: number, listener: Listener = 'loopback'): string[] {
  const configured = config.enabled ? config.origins.map((origin) => new URL(origin).host) : [];
  if (listener === 'network') return configured;
  return [`127.0.0.1:${port}`, `localhost:${port}`, `elicitly.localhost:${port}`, `[::1]:${port}`, ...configured];
}
