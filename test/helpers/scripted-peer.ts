import type WebSocket from 'ws';
import type * as z from 'zod';
import type { HUB_NOTICES, HubNoticeName, PeerMethod, Params, Result, ServiceError } from '../../shared/peer-calls.js';
import type { AnswerFrame, HubFrame } from '../../shared/wire-protocol.js';

type NoticeParams<N extends HubNoticeName> = z.infer<(typeof HUB_NOTICES)[N]['params']>;
/** An answer as a test reads it: the result (typed by the method) or the error. */
export type Answered<M extends PeerMethod> = { id: string; result: Result<M>; error?: undefined } | { id: string | null; error: ServiceError; result?: undefined };

/**
 * What every scripted peer of the hub does with its socket: keeps every frame the hub sent, hands them out by match
 * (bounded), sends calls and raw frames, and knows how the hub closed it. The scripted extension, relay and device add
 * their own handshake.
 */
export class ScriptedPeer {
  readonly received: HubFrame[] = [];
  /** How the hub closed this socket, once it did. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];
  private sequence = 0;

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()) as HubFrame);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('error', () => undefined);
  }

  /** A raw frame (a string as is, anything else as JSON): for tests of what the hub does with bad input. */
  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Sends a call of the peer call map and returns its id, without waiting for the answer. */
  request<M extends PeerMethod>(method: M, params: Params<M>, id = `t${++this.sequence}`): string {
    this.send({ id, method, params });
    return id;
  }

  /** Sends a call and waits (bounded) for the answer that carries its id. */
  async call<M extends PeerMethod>(method: M, params: Params<M>, timeoutMs = 5000): Promise<Answered<M>> {
    return this.answer<M>(this.request(method, params), timeoutMs);
  }

  /** The answer carrying this id (received so far or later). */
  async answer<M extends PeerMethod = PeerMethod>(id: string | null, timeoutMs = 5000): Promise<Answered<M>> {
    const frame = await this.next((f): f is AnswerFrame => 'id' in f && f.id === id, timeoutMs);
    return frame as Answered<M>;
  }

  /** The first notice of this name whose params match (received so far or later). */
  async notice<N extends HubNoticeName>(method: N, match: (params: NoticeParams<N>) => boolean = () => true, timeoutMs = 5000): Promise<NoticeParams<N>> {
    const frame = await this.next((f) => 'method' in f && f.method === method && match(f.params as NoticeParams<N>), timeoutMs);
    return (frame as { params: NoticeParams<N> }).params;
  }

  /** Every notice of this name received so far (taken). */
  notices<N extends HubNoticeName>(method: N): NoticeParams<N>[] {
    const taken: NoticeParams<N>[] = [];
    for (let i = this.received.length - 1; i >= 0; i--) {
      const frame = this.received[i];
      if (frame && 'method' in frame && frame.method === method) {
        this.received.splice(i, 1);
        taken.unshift(frame.params as NoticeParams<N>);
      }
    }
    return taken;
  }

  /** The first frame (received so far or later) matching `match`; bounded by `timeoutMs`. */
  async next(match: (frame: HubFrame) => boolean, timeoutMs = 5000): Promise<HubFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(match);
      if (index !== -1) return this.received.splice(index, 1)[0] as HubFrame;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching hub frame within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((f) => ('method' in f ? f.method : `answer ${String(f.id)}`)))}`);
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
