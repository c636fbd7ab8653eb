import WebSocket from 'ws';
import type { HubFrame } from '../../shared/wire-protocol.js';
import { SUBPROTOCOL } from '../../shared/wire-protocol.js';

/** A raw peer: every frame it received, as text, and how it was closed. */
export interface RawPeer {
  socket: WebSocket;
  frames: string[];
  send(message: unknown): void;
  /** The first frame received (so far or later) that matches: an answer by its id, a notice by its method. */
  next(match: (frame: HubFrame) => boolean, timeoutMs?: number): Promise<HubFrame>;
  closed: Promise<{ code: number; reason: string }>;
}

/**
 * A socket to the hub on `port` that speaks only what the test sends: the upgrade's HTTP status when it is refused, the
 * open socket otherwise. Every socket opened is added to `track`, so the test can terminate them all.
 */
export async function rawPeer(port: number, options: { origin?: string; protocols?: string[]; track?: WebSocket[] } = {}): Promise<RawPeer | { status: number }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, options.protocols ?? [SUBPROTOCOL], options.origin === undefined ? {} : { origin: options.origin });
  options.track?.push(socket);
  socket.on('error', () => undefined);
  const frames: string[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    frames.push(data.toString());
    waiters.splice(0).forEach((wake) => wake());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const status = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('open timed out')), 5000);
    socket.once('open', () => (clearTimeout(timer), resolve(101)));
    socket.once('unexpected-response', (_req, res) => (clearTimeout(timer), res.resume(), resolve(res.statusCode ?? 0)));
  });
  if (status !== 101) return { status };
  return {
    socket,
    frames,
    closed,
    send: (message) => socket.send(JSON.stringify(message)),
    async next(match, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = frames.map((f) => JSON.parse(f) as HubFrame).find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; got ${frames.join(' ')}`);
        // Woken by the next frame; the timer only ends the wait at the deadline.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(timer), resolve()));
        });
      }
    },
  };
}

export function opened(peer: RawPeer | { status: number }): RawPeer {
  if (!('socket' in peer)) throw new Error(`expected the upgrade to succeed, got HTTP ${peer.status}`);
  return peer;
}
