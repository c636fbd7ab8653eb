import type { IncomingMessage } from 'node:http';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { PAIRING_SUBPROTOCOL, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import type { Listener, RemoteConfig } from '../remote-config.js';
import { allowedHosts, allowedOrigins } from '../remote-config.js';

/** `device`: a browser on the hub's own reviewer page (`/phone/`), from an origin the person allowed. */
export type PeerRole = 'extension' | 'relay' | 'device';

type GuardVerdict =
  /** `pairing`: the upgrade asked to pair (the pairing subprotocol); only such a socket may send a pairing hello. */
  | { ok: true; role: PeerRole; origin: string | null; pairingOnly: boolean; pairing: boolean }
  | { ok: false; status: 403 | 429 | 503; reason: string };

interface GuardConfig {
  port: number;
  /** The listener the upgrade came in on: the network one admits devices only, from the configured origins only. */
  listener: Listener;
  /** The reviewer page's settings (read per upgrade: `remote enable`/`disable` take effect at once). */
  remote: () => RemoteConfig;
  /** Origins an extension was paired from (read per upgrade: `pair --remove` takes effect at once). */
  pairedOrigins: () => string[];
  /** Until when this origin must wait after a failed pairing attempt. */
  pairingBackoffUntil: (origin: string) => number;
  /**
   * Sockets that have not proved a key yet on this listener, and the most there may be. Counted apart from proven
   * peers, and apart from the other listener's: keyless sockets fill only their own small room, so they can never lock
   * out the extension and the relays, and the network can never lock out the desk.
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
 * The first filter, from the HTTP upgrade request alone, before a socket exists: Host must be one this listener answers
 * (loopback with our port, or a host the person allowed for the reviewer page: DNS rebinding); on loopback an extension
 * comes from the pinned or a paired origin, or comes to pair from a well-formed extension origin, a relay sends no
 * Origin, and a browser page passes only from an origin of the enabled reviewer page, as a device. The network
 * listener exists for phones: it admits a device from a configured origin and nothing else. It admits nobody to
 * anything: every peer then proves a key on the socket (`hub-auth.ts`), so a local process that forges an Origin header
 * gets no further than its hello.
 */
export function checkUpgrade(req: IncomingMessage, config: GuardConfig): GuardVerdict {
  const remote = config.remote();
  const { listener, port } = config;
  const host = req.headers.host ?? '';
  if (!allowedHosts(remote, port, listener).includes(host.toLowerCase())) {
    return { ok: false, status: 403, reason: `host ${JSON.stringify(host)} is not ${listener === 'network' ? "a configured origin's" : `loopback:${port} nor an allowed remote origin's`}` };
  }

  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  if (!protocols.includes(SUBPROTOCOL)) return { ok: false, status: 403, reason: `subprotocol ${SUBPROTOCOL} missing` };
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
  // Checked before the room is counted: what this listener never admits does not wait for a place in it.
  if (listener === 'network' && (origin === null || !allowedOrigins(remote, port, 'network').includes(origin))) {
    return { ok: false, status: 403, reason: `the network listener admits only phones from a configured origin, not ${origin === null ? 'a socket without an Origin' : JSON.stringify(origin)}` };
  }
  if (config.unproven() >= config.maxUnproven) return { ok: false, status: 503, reason: `${config.maxUnproven} sockets are still proving a key on the ${listener} listener, the most it takes at once` };

  // Browsers always send an Origin; a relay is a Node process and never does. It still has to prove the install key.
  if (origin === null) return { ok: true, role: 'relay', origin: null, pairingOnly: false, pairing: false };
  const pairing = protocols.includes(PAIRING_SUBPROTOCOL);
  // Every origin that comes to pair waits out its backoff, the pinned and the paired ones too: an Origin header is
  // only a claim, and a guess from behind a trusted one is still a guess.
  if (pairing) {
    const until = config.pairingBackoffUntil(origin);
    if (until > config.now()) return { ok: false, status: 429, reason: `origin ${origin} failed to pair; it may try again in ${Math.ceil((until - config.now()) / 1000)} s` };
  }
  if (listener === 'network') return { ok: true, role: 'device', origin, pairingOnly: false, pairing };
  if (origin === EXTENSION_ORIGIN || config.pairedOrigins().includes(origin)) return { ok: true, role: 'extension', origin, pairingOnly: false, pairing };
  if (pairing && isExtensionOrigin(origin)) return { ok: true, role: 'extension', origin, pairingOnly: true, pairing };
  // The reviewer page, from where the person reaches it: a device proves its own key, or pairs with the one-time code.
  if (allowedOrigins(remote, port).includes(origin)) return { ok: true, role: 'device', origin, pairingOnly: false, pairing };
  return { ok: false, status: 403, reason: `origin ${JSON.stringify(origin)} is not trusted` };
}
