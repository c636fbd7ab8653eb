import type WebSocket from 'ws';
import type { HubMessage } from '../../shared/wire-protocol.js';

/**
 * What every scripted peer of the hub does with its socket: keeps every frame the hub sent, hands them out by match
 * (bounded), sends raw or JSON frames, and knows how the hub closed it. The scripted extension, relay and device add
 * their own handshake.
 */
export class ScriptedPeer {
  readonly received: HubMessage[] = [];
  /** How the hub closed this socket, once it did. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()) as HubMessage);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('error', () => undefined);
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message (received so far or later) matching `match`; bounded by `timeoutMs`. */
  async next<T extends HubMessage['type']>(match: (m: HubMessage) => boolean, timeoutMs = 5000): Promise<Extract<HubMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(match);
      if (index !== -1) return this.received.splice(index, 1)[0] as Extract<HubMessage, { type: T }>;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching hub message within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((m) => m.type))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, Math.min(left, 100));
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}
