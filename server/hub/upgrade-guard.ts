import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { PAIRING_PREFIX, RELAY_AUTH_PREFIX, SUBPROTOCOL } from '../../shared/wire-protocol.js';

export type PeerRole = 'extension' | 'relay';

type GuardVerdict =
  | { ok: true; role: PeerRole; origin: string | null; pairedNow: boolean }
  | { ok: false; status: 401 | 403; reason: string };

interface GuardConfig {
  port: number;
  secret: string;
  pairedOrigins: () => string[];
  pairingCode: () => { code: string; expiresAt: number } | undefined;
}

function equalSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const EXTENSION_SCHEMES = ['chrome-extension://', 'moz-extension://'];

/**
 * Decides, from the HTTP upgrade request alone, whether a socket may exist: Host must be loopback with our port (DNS
 * rebinding), relays prove the per-install secret, extensions must come from the pinned or a paired origin.
 */
export function checkUpgrade(req: IncomingMessage, config: GuardConfig): GuardVerdict {
  const host = req.headers.host ?? '';
  const allowedHosts = [`127.0.0.1:${config.port}`, `localhost:${config.port}`, `[::1]:${config.port}`];
  if (!allowedHosts.includes(host.toLowerCase())) return { ok: false, status: 403, reason: `host ${JSON.stringify(host)} is not loopback:${config.port}` };

  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  if (!protocols.includes(SUBPROTOCOL)) return { ok: false, status: 403, reason: `subprotocol ${SUBPROTOCOL} missing` };
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;

  const auth = protocols.find((p) => p.startsWith(RELAY_AUTH_PREFIX));
  if (auth !== undefined) {
    // Browsers always send an Origin; a relay is a Node process and never does.
    if (origin !== null) return { ok: false, status: 403, reason: 'relay credentials from a browser origin' };
    if (!equalSecret(auth.slice(RELAY_AUTH_PREFIX.length), config.secret)) return { ok: false, status: 401, reason: 'wrong relay secret' };
    return { ok: true, role: 'relay', origin: null, pairedNow: false };
  }

  if (origin === null || origin === 'null') return { ok: false, status: 401, reason: 'no origin and no secret' };
  if (origin === EXTENSION_ORIGIN || config.pairedOrigins().includes(origin)) return { ok: true, role: 'extension', origin, pairedNow: false };

  const pairing = protocols.find((p) => p.startsWith(PAIRING_PREFIX));
  const code = config.pairingCode();
  if (pairing !== undefined && code !== undefined && Date.now() < code.expiresAt && EXTENSION_SCHEMES.some((s) => origin.startsWith(s))) {
    if (equalSecret(pairing.slice(PAIRING_PREFIX.length), code.code)) return { ok: true, role: 'extension', origin, pairedNow: true };
  }
  return { ok: false, status: 403, reason: `origin ${JSON.stringify(origin)} is not trusted` };
}
