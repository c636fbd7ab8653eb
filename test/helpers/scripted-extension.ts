import WebSocket from 'ws';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import type { HubMessage } from '../../shared/wire-protocol.js';
import { PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';

/** A stand-in for the browser extension: it speaks the wire protocol with the pinned Origin, scripted by the test. */
export class ScriptedExtension {
  readonly received: HubMessage[] = [];
  /** How the hub closed this socket, once it did. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()) as HubMessage);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('error', () => undefined);
  }

  static async connect(port: number, options: { origin?: string; protocols?: string[]; hello?: boolean } = {}): Promise<ScriptedExtension> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}`, options.protocols ?? [SUBPROTOCOL], { origin: options.origin ?? EXTENSION_ORIGIN });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    const ext = new ScriptedExtension(socket);
    if (options.hello !== false) {
      ext.send({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'scripted-extension', version: '1' } });
      await ext.next((m) => m.type === 'welcome');
    }
    return ext;
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

export function freePort(): number {
  return 20_000 + Math.floor(Math.random() * 20_000);
}
