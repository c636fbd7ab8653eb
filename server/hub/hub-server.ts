import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type { Answer, ApprovalMethod } from '../../shared/approval-calls.js';
import { fail, parseCallParams } from '../../shared/approval-calls.js';
import type { HubMessage, PeerMessage } from '../../shared/wire-protocol.js';
import {
  CLOSE_GOING_AWAY,
  CLOSE_HELLO_TIMEOUT,
  CLOSE_PROTOCOL_MISMATCH,
  HEARTBEAT_MS,
  HelloVersionSchema,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  PeerMessageSchema,
  ReplyToSchema,
  SUBPROTOCOL,
  firstIssue,
  protocolMismatchReason,
} from '../../shared/wire-protocol.js';
import type { ApprovalEngine } from '../approvals/approval-engine.js';
import { log } from '../log.js';
import { addPairedOrigin, clearPairingCode, pairedOrigins, readPairingCode } from '../state-dir.js';
import { TokenBucket } from './rate-limit.js';
import type { PeerRole } from './upgrade-guard.js';
import { checkUpgrade } from './upgrade-guard.js';

interface HubOptions {
  port: number;
  /** The state dir: paired origins and the pairing code live there. */
  dir: string;
  secret: string;
  heartbeatMs?: number;
  /** A peer must say hello within this. Default 10 s. */
  helloTimeoutMs?: number;
}

interface Peer {
  socket: WebSocket;
  role: PeerRole;
  greeted: boolean;
  bucket: TokenBucket;
  /** A relay's calls still running, so a `call.abort` or a closing socket can stop them. */
  calls: Map<string, AbortController>;
}

function send(socket: WebSocket, message: HubMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

/** Checks a relay's params against the method's schema, then runs the engine's call. */
async function dispatchCall<M extends ApprovalMethod>(engine: ApprovalEngine, method: M, raw: unknown, signal: AbortSignal): Promise<Answer<unknown>> {
  const params = parseCallParams(method, raw);
  if (!params.success) return fail('invalid', `params.${firstIssue(params.error)}`);
  return engine.call(method, params.data, signal);
}

/**
 * The hub's socket server. `listen` only binds the port (the port is the hub lock); nothing is accepted until `attach`
 * hands it the engine, which the caller opens only after binding. `close` follows the order that keeps one writer:
 * stop accepting, let the caller drain and close the store, then drop sockets and release the port.
 */
export class HubServer {
  private readonly peers = new Set<Peer>();
  private engine: ApprovalEngine | undefined;
  private accepting = false;
  private unsubscribe: (() => void) | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    private readonly options: HubOptions,
  ) {
    http.on('upgrade', (req, socket, head) => {
      if (!this.accepting || !this.engine) {
        // Bound but not ready (opening the store) or shutting down: the peer retries and finds whoever is hub.
        socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const { port, dir, secret } = this.options;
      const verdict = checkUpgrade(req, { port, secret, pairedOrigins: () => pairedOrigins(dir), pairingCode: () => readPairingCode(dir) });
      if (!verdict.ok) {
        log('warn', 'refused a hub connection', { status: verdict.status, reason: verdict.reason });
        socket.end(`HTTP/1.1 ${verdict.status} ${verdict.status === 401 ? 'Unauthorized' : 'Forbidden'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      if (verdict.pairedNow && verdict.origin) {
        addPairedOrigin(dir, verdict.origin);
        clearPairingCode(dir);
        log('info', 'paired a new extension origin', { origin: verdict.origin });
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, verdict.role));
    });
    // Sent on a timer and never in answer to one: a peer that answers every heartbeat then sees a handful a minute.
    this.heartbeat = setInterval(() => {
      for (const peer of this.peers) if (peer.greeted) send(peer.socket, { type: 'heartbeat', t: Date.now() });
    }, options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Binds 127.0.0.1:port; null when another process holds it (that process is the hub). */
  static async listen(options: HubOptions): Promise<HubServer | null> {
    const http = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' }).end('elicitly hub: WebSocket only\n');
    });
    const bound = await new Promise<boolean>((resolve, reject) => {
      http.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
      http.listen(options.port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) return null;
    // The hub must not keep a host's server process alive on its own once stdin closes.
    http.unref();
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_FRAME_BYTES,
      handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    });
    return new HubServer(http, wss, options);
  }

  /** Starts accepting peers, serving them from `engine`. */
  attach(engine: ApprovalEngine): void {
    this.engine = engine;
    engine.reviewerConnected = () => this.extensionsConnected() > 0;
    this.unsubscribe = engine.onEvent((event) => {
      for (const peer of this.peers) if (peer.role === 'extension' && peer.greeted) send(peer.socket, event);
    });
    this.accepting = true;
    log('info', 'hub listening', { port: this.options.port });
  }

  extensionsConnected(): number {
    return [...this.peers].filter((p) => p.role === 'extension' && p.greeted).length;
  }

  /** New sockets get 503 from now on; the peers already connected stay until `close`. */
  stopAccepting(): void {
    this.accepting = false;
  }

  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.heartbeat);
    this.unsubscribe?.();
    for (const peer of this.peers) {
      for (const controller of peer.calls.values()) controller.abort();
      peer.socket.close(CLOSE_GOING_AWAY, 'hub closing');
    }
    // A peer that does not finish the closing handshake promptly is cut off: the port must be released.
    const cutoff = setTimeout(() => {
      for (const peer of this.peers) peer.socket.terminate();
    }, 500);
    this.wss.close();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
    clearTimeout(cutoff);
    this.http.closeAllConnections();
  }

  private accept(socket: WebSocket, role: PeerRole): void {
    const peer: Peer = { socket, role, greeted: false, bucket: new TokenBucket(), calls: new Map() };
    this.peers.add(peer);
    const helloTimer = setTimeout(() => {
      if (!peer.greeted) socket.close(CLOSE_HELLO_TIMEOUT, 'no hello');
    }, this.options.helloTimeoutMs ?? 10_000);
    socket.on('message', (data, isBinary) => this.receive(peer, isBinary ? null : data.toString()));
    socket.on('close', () => {
      clearTimeout(helloTimer);
      this.peers.delete(peer);
      for (const controller of peer.calls.values()) controller.abort();
    });
    socket.on('error', (error) => log('debug', 'peer socket error', { error: error.message }));
  }

  private receive(peer: Peer, text: string | null): void {
    const { socket } = peer;
    if (!peer.bucket.take()) {
      send(socket, { type: 'error', code: 'rate_limited', message: 'too many messages; slow down' });
      return;
    }
    if (text === null) {
      send(socket, { type: 'error', code: 'invalid_message', message: 'binary frames are not accepted' });
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      send(socket, { type: 'error', code: 'invalid_message', message: 'not JSON' });
      return;
    }
    // The version is read before the rest of the hello, so a peer of any version learns why it is refused.
    const hello = HelloVersionSchema.safeParse(raw);
    if (hello.success && hello.data.protocol !== PROTOCOL_VERSION) {
      log('warn', 'closed a peer speaking another protocol', { theirs: hello.data.protocol, ours: PROTOCOL_VERSION, role: peer.role });
      socket.close(CLOSE_PROTOCOL_MISMATCH, protocolMismatchReason(PROTOCOL_VERSION));
      return;
    }
    const parsed = PeerMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.refuse(peer, raw, firstIssue(parsed.error));
      return;
    }
    const message = parsed.data;
    if (!peer.greeted && message.type !== 'hello') {
      send(socket, { type: 'error', code: 'not_hello', message: 'send hello first' });
      return;
    }
    this.dispatch(peer, message).catch((error: unknown) => {
      log('error', 'a hub message failed', { type: message.type, error: String(error) });
      send(socket, { type: 'error', code: 'invalid_message', message: `the hub could not process this ${message.type}` });
    });
  }

  /** A frame that failed its schema is answered with the id it carried, when it carried one the peer waits on. */
  private refuse(peer: Peer, raw: unknown, reason: string): void {
    const replyTo = ReplyToSchema.safeParse(raw);
    if (replyTo.success && replyTo.data.type === 'decide' && peer.role === 'extension') {
      const { elicitationId, idempotencyKey } = replyTo.data;
      send(peer.socket, {
        type: 'decision.result',
        elicitationId,
        idempotencyKey,
        ok: false,
        reason: 'invalid',
        issues: [{ path: reason.split(':')[0] ?? '(message)', rule: 'invalid_message', message: reason }],
      });
    } else if (replyTo.success && replyTo.data.type === 'call' && peer.role === 'relay') {
      send(peer.socket, { type: 'call.result', callId: replyTo.data.callId, ok: false, error: { code: 'invalid', message: reason } });
    } else {
      send(peer.socket, { type: 'error', code: 'invalid_message', message: reason });
    }
  }

  private async dispatch(peer: Peer, message: PeerMessage): Promise<void> {
    const engine = this.engine;
    if (!engine) return;
    switch (message.type) {
      case 'hello':
        if (message.role !== peer.role) {
          send(peer.socket, { type: 'error', code: 'forbidden', message: `your credentials make you a ${peer.role}, not a ${message.role}` });
          return;
        }
        peer.greeted = true;
        // Every (re)connect gets every pending request: delivery survives dropped sockets and restarted workers.
        send(peer.socket, { type: 'welcome', protocol: PROTOCOL_VERSION, hubPid: process.pid, pending: peer.role === 'extension' ? engine.pendingViews() : [] });
        return;
      case 'heartbeat':
        return;
      case 'decide':
        if (peer.role !== 'extension') break;
        send(peer.socket, await engine.decide(message).catch((error: unknown) => {
          log('error', 'a decision failed', { error: String(error) });
          return { type: 'decision.result' as const, elicitationId: message.elicitationId, idempotencyKey: message.idempotencyKey, ok: false, reason: 'unavailable' as const };
        }));
        return;
      case 'call': {
        if (peer.role !== 'relay') break;
        const controller = new AbortController();
        peer.calls.set(message.callId, controller);
        const answer = await dispatchCall(engine, message.method, message.params, controller.signal).catch((error: unknown) => {
          log('error', 'a relayed call failed', { method: message.method, error: String(error) });
          return fail('unavailable', 'the hub could not process this call');
        });
        peer.calls.delete(message.callId);
        send(peer.socket, answer.ok ? { type: 'call.result', callId: message.callId, ok: true, value: answer.value } : { type: 'call.result', callId: message.callId, ok: false, error: answer.error });
        return;
      }
      case 'call.abort':
        if (peer.role !== 'relay') break;
        peer.calls.get(message.callId)?.abort();
        return;
    }
    send(peer.socket, { type: 'error', code: 'forbidden', message: `${message.type} is not for a ${peer.role}` });
  }
}
