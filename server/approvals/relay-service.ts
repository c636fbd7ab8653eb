import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import type { RelayMethod } from '../../shared/wire-protocol.js';
import { HubMessageSchema, PROTOCOL_VERSION, RELAY_AUTH_PREFIX, SUBPROTOCOL, parseFrame } from '../../shared/wire-protocol.js';
import { log } from '../log.js';
import type { Answer, ApprovalService, CreateParams, Created, ServiceError } from './service.js';
import { ServiceErrorCodeSchema, fail } from './service.js';
import type { Status } from '../../shared/lifecycle.js';

/** A relay forwards the approval tools to the hub process over an authenticated socket. */
export class RelayService implements ApprovalService {
  private readonly pending = new Map<string, (answer: Answer<unknown>) => void>();
  closed = false;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const parsed = parseFrame(HubMessageSchema, data.toString());
      if (!parsed.ok) {
        log('warn', 'relay got an invalid frame from the hub', { error: parsed.error });
        return;
      }
      const message = parsed.message;
      if (message.type !== 'call.result') return;
      const resolve = this.pending.get(message.callId);
      if (!resolve) return;
      this.pending.delete(message.callId);
      if (message.ok) resolve({ ok: true, value: message.value });
      else {
        const code = ServiceErrorCodeSchema.safeParse(message.error?.code);
        resolve({ ok: false, error: { code: code.success ? code.data : 'unavailable', message: message.error?.message ?? 'hub error' } });
      }
    });
    socket.on('close', () => {
      this.closed = true;
      // Pending calls are answered, never left hanging: the broker retries them on the next hub.
      for (const resolve of this.pending.values()) resolve(fail('unavailable', 'the hub went away'));
      this.pending.clear();
      this.onclose?.();
    });
    socket.on('error', (error) => log('debug', 'relay socket error', { error: error.message }));
  }

  onclose: (() => void) | undefined;

  static connect(port: number, secret: string): Promise<RelayService | null> {
    return new Promise((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}`, [SUBPROTOCOL, `${RELAY_AUTH_PREFIX}${secret}`], { handshakeTimeout: 2000 });
      const fail = () => resolve(null);
      socket.once('error', fail);
      socket.once('unexpected-response', fail);
      socket.once('open', () => {
        socket.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'relay', client: { name: 'elicitly-relay', version: String(process.pid) } }));
        socket.once('message', (data) => {
          const parsed = parseFrame(HubMessageSchema, data.toString());
          socket.off('error', fail);
          if (parsed.ok && parsed.message.type === 'welcome') resolve(new RelayService(socket));
          else {
            socket.close();
            resolve(null);
          }
        });
      });
    });
  }

  private call<T>(method: RelayMethod, params: Record<string, unknown>): Promise<Answer<T>> {
    if (this.closed) return Promise.resolve(fail('unavailable', 'the hub went away'));
    const callId = randomUUID();
    return new Promise((resolve) => {
      this.pending.set(callId, resolve as (answer: Answer<unknown>) => void);
      this.socket.send(JSON.stringify({ type: 'call', callId, method, params }));
    });
  }

  create(params: CreateParams): Promise<Answer<Created>> {
    return this.call('create', params);
  }
  status(id: string): Promise<Answer<{ status: Status }>> {
    return this.call('status', { id });
  }
  await(id: string, waitMs: number): Promise<Answer<{ status: Status }>> {
    return this.call('await', { id, waitMs });
  }
  result(id: string): Promise<Answer<Record<string, unknown>>> {
    return this.call('result', { id });
  }
  cancel(id: string): Promise<Answer<{ status: 'canceled' }>> {
    return this.call('cancel', { id });
  }
  close(): void {
    this.socket.close();
  }
}

export type { ServiceError };
