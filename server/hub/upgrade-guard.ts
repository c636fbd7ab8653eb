import type { IncomingMessage } from 'node:http';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { PAIRING_SUBPROTOCOL, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import type { RemoteConfig } from '../remote-config.js';
import { allowedHosts, allowedOrigins } from '../remote-config.js';

/** `device`: a browser on the hub's own reviewer page (`/phone/`), from an origin the person allowed. */
export type PeerRole = 'extension' | 'relay' | 'device';

type GuardVerdict =
  /** `pairing`: the upgrade asked to pair (the pairing subprotocol); only such a socket may send a pairing hello. */
  | { ok: true; role: PeerRole; origin: string | null; pairingOnly: boolean; pairing: boolean }
  | { ok: false; status: 403 | 429 | 503; reason: string };

interface GuardConfig {
  port: number;
  /** The reviewer page's settings (read per upgrade: `remote enable`/`disable` take effect at once). */
  remote: () => RemoteConfig;
  /** Origins an extension was paired from (read per upgrade: `pair --remove` takes effect at once). */
  pairedOrigins: () => string[];
  /** Until when this origin must wait after a failed pairing attempt. */
  pairingBackoffUntil: (origin: string) => number;
  /**
   * Sockets that have not proved a key yet, and the most there may be. Counted apart from proven peers: keyless
   * sockets fill only their own small room, so they can never lock out the extension and the relays.
   */
  unproven: () => number;
  maxUnproven: number;
  now: () => number;
}

/** The origins a browser gives an extension: Chrome's 32 letters a–p, Firefox's per-install UUID. */
const EXTENSION_ORIGIN_PATTERN = /^(chrome-extension:\/\/[a-p]{32}|moz-extension:\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function isExtensionOrigin(origin: string): boolean {
  return EXTENSION_ORIGIN_PATTERN.test(origin);
}

/**
 * The first filter, from the HTTP upgrade request alone, before a socket exists: Host must be loopback with our port,
 * or a host the person allowed for the reviewer page (DNS rebinding); an extension comes from the pinned or a paired
 * origin, or comes to pair from a well-formed extension origin; a browser page passes only from an origin of the
 * enabled reviewer page, as a device. It admits nobody to anything: every peer then proves a key on the socket
 * (`hub-auth.ts`), so a local process that forges an Origin header gets no further than its hello.
 */
export function checkUpgrade(req: IncomingMessage, config: GuardConfig): GuardVerdict {
  const remote = config.remote();
  const host = req.headers.host ?? '';
  if (!allowedHosts(remote, config.port).includes(host.toLowerCase())) return { ok: false, status: 403, reason: `host ${JSON.stringify(host)} is not loopback:${config.port} nor an allowed remote origin's` };

  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  if (!protocols.includes(SUBPROTOCOL)) return { ok: false, status: 403, reason: `subprotocol ${SUBPROTOCOL} missing` };
  if (config.unproven() >= config.maxUnproven) return { ok: false, status: 503, reason: `${config.maxUnproven} sockets are still proving a key, the most this hub takes at once` };

  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
  // Browsers always send an Origin; a relay is a Node process and never does. It still has to prove the install key.
  if (origin === null) return { ok: true, role: 'relay', origin: null, pairingOnly: false, pairing: false };
  const pairing = protocols.includes(PAIRING_SUBPROTOCOL);
  // Every origin that comes to pair waits out its backoff, the pinned and the paired ones too: an Origin header is
  // only a claim, and a guess from behind a trusted one is still a guess.
  if (pairing) {
    const until = config.pairingBackoffUntil(origin);
    if (until > config.now()) return { ok: false, status: 429, reason: `origin ${origin} failed to pair; it may try again in ${Math.ceil((until - config.now()) / 1000)} s` };
  }
  if (origin === EXTENSION_ORIGIN || config.pairedOrigins().includes(origin)) return { ok: true, role: 'extension', origin, pairingOnly: false, pairing };
  if (pairing && isExtensionOrigin(origin)) return { ok: true, role: 'extension', origin, pairingOnly: true, pairing };
  // The reviewer page, from where the person reaches it: a device proves its own key, or pairs with the one-time code.
  if (allowedOrigins(remote, config.port).includes(origin)) return { ok: true, role: 'device', origin, pairingOnly: false, pairing };
  return { ok: false, status: 403, reason: `origin ${JSON.stringify(origin)} is not trusted` };
}
