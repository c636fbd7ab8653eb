import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type { HubMessage, PeerMessage } from '../../shared/wire-protocol.js';
import { PROTOCOL_VERSION, PeerMessageSchema, SUBPROTOCOL, parseFrame } from '../../shared/wire-protocol.js';
import type { ApprovalEngine } from '../approvals/approval-engine.js';
import type { Answer } from '../approvals/service.js';
import { AwaitParamsSchema, CreateParamsSchema, IdParamsSchema } from '../approvals/service.js';
import { log } from '../log.js';
import { addPairedOrigin, clearPairingCode, pairedOrigins, readPairingCode } from '../state-dir.js';
import { TokenBucket } from './rate-limit.js';
import type { PeerRole } from './upgrade-guard.js';
import { checkUpgrade } from './upgrade-guard.js';

export const MAX_PAYLOAD_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 20_000;

interface Peer {
  socket: WebSocket;
  role: PeerRole;
  greeted: boolean;
  bucket: TokenBucket;
}

export interface Hub {
  port: number;
  close: () => Promise<void>;
  extensionsConnected: () => number;
}

function send(socket: WebSocket, message: HubMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

/** Listens on 127.0.0.1 only; resolves null when another process already holds the port (it is the hub then). */
export async function startHub(options: { port: number; dir: string; secret: string; engine: ApprovalEngine }): Promise<Hub | null> {
  const { port, dir, secret, engine } = options;
  const peers = new Set<Peer>();
  const http: Server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('elicitly hub: WebSocket only\n');
  });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_PAYLOAD_BYTES,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  http.on('upgrade', (req, socket, head) => {
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
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, verdict.role));
  });

  const extensions = () => [...peers].filter((p) => p.role === 'extension' && p.greeted);
  engine.reviewerConnected = () => extensions().length > 0;
  const unsubscribe = engine.onEvent((event) => {
    for (const peer of extensions()) send(peer.socket, event);
  });

  async function dispatch(peer: Peer, message: PeerMessage): Promise<void> {
    switch (message.type) {
      case 'hello':
        if (message.protocol !== PROTOCOL_VERSION || message.role !== peer.role) {
          send(peer.socket, { type: 'error', code: 'unsupported_protocol', message: `this hub speaks protocol ${PROTOCOL_VERSION} and took you as ${peer.role}` });
          return;
        }
        peer.greeted = true;
        // Every (re)connect gets every pending request: delivery survives dropped sockets and restarted workers.
        send(peer.socket, { type: 'welcome', protocol: PROTOCOL_VERSION, hubPid: process.pid, pending: peer.role === 'extension' ? engine.pendingViews() : [] });
        return;
      case 'heartbeat':
        send(peer.socket, { type: 'heartbeat', t: Date.now() });
        return;
      case 'ack':
        return;
      case 'decide':
        if (peer.role !== 'extension') break;
        send(peer.socket, await engine.decide(message));
        return;
      case 'call':
        if (peer.role !== 'relay') break;
        send(peer.socket, await call(message.callId, message.method, message.params));
        return;
    }
    send(peer.socket, { type: 'error', code: 'forbidden', message: `${message.type} is not for a ${peer.role}` });
  }

  async function call(callId: string, method: string, params: Record<string, unknown>): Promise<HubMessage> {
    const answer = await (async (): Promise<Answer<unknown>> => {
      if (method === 'create') {
        const p = CreateParamsSchema.safeParse(params);
        return p.success ? engine.create(p.data) : { ok: false, error: { code: 'invalid', message: p.error.message } };
      }
      if (method === 'await') {
        const p = AwaitParamsSchema.safeParse(params);
        return p.success ? engine.await(p.data.id, p.data.waitMs) : { ok: false, error: { code: 'invalid', message: p.error.message } };
      }
      if (method === 'reviewer') return { ok: true, value: { connected: engine.reviewerConnected() } };
      const p = IdParamsSchema.safeParse(params);
      if (!p.success) return { ok: false, error: { code: 'invalid', message: p.error.message } };
      if (method === 'status') return engine.status(p.data.id);
      if (method === 'result') return engine.result(p.data.id);
      return engine.cancel(p.data.id);
    })();
    return answer.ok ? { type: 'call.result', callId, ok: true, value: answer.value } : { type: 'call.result', callId, ok: false, error: answer.error };
  }

  function accept(socket: WebSocket, role: PeerRole): void {
    const peer: Peer = { socket, role, greeted: false, bucket: new TokenBucket() };
    peers.add(peer);
    socket.on('message', (data, isBinary) => {
      if (!peer.bucket.take()) {
        send(socket, { type: 'error', code: 'rate_limited', message: 'too many messages; slow down' });
        return;
      }
      const parsed = isBinary ? { ok: false as const, error: 'binary frames are not accepted' } : parseFrame(PeerMessageSchema, data.toString());
      if (!parsed.ok) {
        send(socket, { type: 'error', code: 'invalid_message', message: parsed.error });
        return;
      }
      if (!peer.greeted && parsed.message.type !== 'hello') {
        send(socket, { type: 'error', code: 'not_hello', message: 'send hello first' });
        return;
      }
      dispatch(peer, parsed.message).catch((error: unknown) => {
        log('error', 'hub message failed', { error: String(error) });
        send(socket, { type: 'error', code: 'invalid_message', message: 'the hub could not process this message' });
      });
    });
    socket.on('close', () => peers.delete(peer));
    socket.on('error', (error) => log('debug', 'peer socket error', { error: error.message }));
  }

  const heartbeat = setInterval(() => {
    for (const peer of peers) if (peer.greeted) send(peer.socket, { type: 'heartbeat', t: Date.now() });
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const listening = await new Promise<boolean>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    http.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!listening) {
    clearInterval(heartbeat);
    unsubscribe();
    wss.close();
    return null;
  }
  // The hub must not keep a host's server process alive on its own once stdin closes.
  http.unref();
  log('info', 'hub listening', { port });
  return {
    port,
    extensionsConnected: () => extensions().length,
    close: async () => {
      clearInterval(heartbeat);
      unsubscribe();
      for (const peer of peers) peer.socket.terminate();
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
