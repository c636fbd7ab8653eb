import { WebSocket } from 'ws';
import type { AgentMethod, Answer, ApprovalService, Params, Result } from '../../shared/peer-calls.js';
import { fail } from '../../shared/peer-calls.js';
import { CallClient } from '../../shared/peer-client.js';
import { nextHandshake, startHandshake, type HandshakeRefusal } from '../../shared/hub-handshake.js';
import {
  CLOSE_AUTH_FAILED,
  CLOSE_PROTOCOL_MISMATCH,
  CLOSE_UNKNOWN_KEY,
  HubFrameSchema,
  SUBPROTOCOL,
  hubProtocolFromReason,
  isAnswer,
  parseFrame,
  type CallFrame,
} from '../../shared/wire-protocol.js';
import type { PeerNotice } from '../../shared/peer-calls.js';
import { log } from '../log.js';

interface RelayClientOptions {
  /** The hub's port: every proof is bound to it. Dialled on 127.0.0.1 unless `url` names another way in. */
  port: number;
  /**
   * A hub on another machine (ELICITLY_HUB_URL): a tunnel's end, ws:// or wss://. Proofs stay bound to the hub's own
   * port (from the exported token), whatever port the tunnel ends at.
   */
  url?: string;
  /**
   * The install key, or with `keyId` a key exported for this relay (`key export`); it never travels: the relay checks
   * the hub's proof of it, then proves it in turn.
   */
  key: string;
  keyId?: string;
  /** Connect, hello and welcome must all happen within this. Default 3 s. */
  handshakeTimeoutMs?: number;
  /** How long a call other than `await` may take. Default 15 s. */
  callTimeoutMs?: number;
}

/** An `await` call may take its whole window; the relay gives the hub this much more before it gives up. */
const AWAIT_SLACK_MS = 5000;

type RelayConnection =
  | { ok: true; relay: RelayClient }
  | { ok: false; reason: 'refused' | 'timeout' | 'closed' | 'version_mismatch' | 'untrusted' | 'rejected'; detail: string; hubProtocol?: number };

const NODE_TIMERS = { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (handle: NodeJS.Timeout) => clearTimeout(handle) };

/**
 * A relay forwards the agent's calls to the hub process over an authenticated socket. Everything is bounded: the
 * handshake, every call (an `await` by its own window), and a closing socket answers every call still waiting.
 */
export class RelayClient implements ApprovalService {
  private readonly calls: CallClient<NodeJS.Timeout>;
  private closed = false;
  onclose: (() => void) | undefined;

  private constructor(
    private readonly socket: WebSocket,
    private readonly callTimeoutMs: number,
  ) {
    this.calls = new CallClient({ send: (frame) => this.send(frame), timers: NODE_TIMERS });
    socket.on('message', (data) => {
      const parsed = parseFrame(HubFrameSchema, data.toString());
      if (!parsed.ok) {
        log('warn', 'relay got an invalid frame from the hub', { error: parsed.error });
        return;
      }
      const frame = parsed.message;
      if (!isAnswer(frame)) return; // Heartbeats are never answered (see HEARTBEAT_MS); a relay hears no other notice.
      if (!this.calls.receive(frame) && 'error' in frame) log('warn', 'the hub refused a frame', { code: frame.error.code, message: frame.error.message });
    });
    socket.on('close', () => {
      this.closed = true;
      // Every waiting call is answered, never left hanging: the role election retries it on the next hub.
      this.calls.closeAll();
      this.onclose?.();
    });
    socket.on('error', (error) => log('debug', 'relay socket error', { error: error.message }));
  }

  /**
   * Opens the socket and runs the handshake (`shared/hub-handshake.ts`): a hub that cannot prove it knows the key is not
   * ours (another program, or another user's, holds the port), and the relay tells it nothing but its hello.
   */
  static connect(options: RelayClientOptions): Promise<RelayConnection> {
    const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 3000;
    const where = options.url ?? `127.0.0.1:${options.port}`;
    return new Promise((resolve) => {
      const socket = new WebSocket(options.url ?? `ws://127.0.0.1:${options.port}`, [SUBPROTOCOL], { handshakeTimeout: handshakeTimeoutMs, headers: tunnelHost(options) });
      const start = startHandshake({
        role: 'relay',
        client: { name: 'elicitly-relay', version: String(process.pid) },
        secret: options.key,
        claim: options.keyId !== undefined ? { keyId: options.keyId } : {},
        binding: { port: options.port, role: 'relay' },
      });
      let state = start.state;
      let settled = false;
      // The handshake's listeners go before the steady-state client adds its own.
      const settle = (result: RelayConnection | 'welcomed') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners();
        if (result === 'welcomed') return resolve({ ok: true, relay: new RelayClient(socket, options.callTimeoutMs ?? 15_000) });
        socket.on('error', () => undefined);
        socket.terminate();
        resolve(result);
      };
      const timer = setTimeout(() => settle({ ok: false, reason: 'timeout', detail: `no welcome within ${handshakeTimeoutMs} ms` }), handshakeTimeoutMs);
      socket.once('error', (error) => settle({ ok: false, reason: 'refused', detail: error.message }));
      socket.once('unexpected-response', (_req, res) => settle({ ok: false, reason: 'refused', detail: `HTTP ${res.statusCode}` }));
      socket.once('close', (code, reason) => {
        const hubProtocol = code === CLOSE_PROTOCOL_MISMATCH ? hubProtocolFromReason(reason.toString()) : null;
        if (hubProtocol !== null) settle({ ok: false, reason: 'version_mismatch', detail: reason.toString(), hubProtocol });
        else if (options.keyId !== undefined && (code === CLOSE_AUTH_FAILED || code === CLOSE_UNKNOWN_KEY)) {
          log('debug', 'the hub refused the exported key', { keyId: options.keyId, code, reason: reason.toString() });
          settle({ ok: false, reason: 'rejected', detail: `the hub at ${where} refused the key ${options.keyId} (revoked, or exported by another hub)` });
        } else if (code === CLOSE_AUTH_FAILED) settle({ ok: false, reason: 'closed', detail: 'the hub refused this install key (it was replaced meanwhile?)' });
        else settle({ ok: false, reason: 'closed', detail: `the hub closed the socket (${code}) before its welcome` });
      });
      socket.once('open', () => socket.send(JSON.stringify(start.send)));
      // One frame at a time, each checked before anything more is sent.
      let queue = Promise.resolve();
      socket.on('message', (data, isBinary) => {
        queue = queue.then(async () => {
          if (settled) return;
          const step = await nextHandshake(state, isBinary ? data : data.toString());
          if (settled) return;
          if ('refusal' in step) return settle(refused(step.refusal, options, where));
          if ('welcome' in step) return settle('welcomed');
          if (step.note !== undefined) log('debug', step.note);
          if (step.send) socket.send(JSON.stringify(step.send));
          state = step.state;
        }).catch((error: unknown) => settle({ ok: false, reason: 'closed', detail: `the handshake failed: ${String(error)}` }));
      });
    });
  }

  call<M extends AgentMethod>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Answer<Result<M>>> {
    if (this.closed) return Promise.resolve(fail('unavailable', 'the hub went away'));
    const timeoutMs = 'waitMs' in params && typeof params.waitMs === 'number' ? params.waitMs + AWAIT_SLACK_MS : this.callTimeoutMs;
    return this.calls.call(method, params, { timeoutMs, ...(signal ? { signal } : {}) });
  }

  close(): void {
    this.socket.close();
  }

  private send(frame: CallFrame | PeerNotice): boolean {
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(frame));
      return true;
    }
    // A socket already closing answers the call with its close (`closeAll`), once the role election knows the hub went:
    // it then retries on whoever takes over, instead of taking "not connected" for this hub's answer.
    return this.socket.readyState === WebSocket.CLOSING;
  }
}

/**
 * The Host header for a loopback URL: an SSH tunnel (or any port forward) ends on this machine's loopback, often at
 * another port than the hub's, and the hub answers only Host 127.0.0.1:<its port> there (its DNS-rebinding guard). The
 * request does go to the hub, so naming it is the truth; any other URL keeps its own host (a tailnet name the hub was
 * told about with `remote enable --origin`).
 */
function tunnelHost(options: RelayClientOptions): Record<string, string> {
  if (options.url === undefined) return {};
  const { hostname } = new URL(options.url);
  const loopback = hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  return loopback ? { host: `127.0.0.1:${options.port}` } : {};
}

/** What a refused handshake tells the role election, which says it to the agent. */
function refused(refusal: HandshakeRefusal, options: RelayClientOptions, where: string): RelayConnection {
  switch (refusal.kind) {
    case 'mismatch':
      return { ok: false, reason: 'version_mismatch', detail: refusal.why, ...(refusal.hubProtocol === null ? {} : { hubProtocol: refusal.hubProtocol }) };
    case 'wrong_proof':
      return {
        ok: false,
        reason: 'untrusted',
        detail:
          options.keyId === undefined
            ? `the process on ${where} could not prove it is this install's hub`
            : `the process at ${where} could not prove it holds the key ${options.keyId} (a wrong ELICITLY_HUB_KEY, or a hub on port ${options.port} that did not export it)`,
      };
    case 'unproven':
      return { ok: false, reason: 'untrusted', detail: `the process at ${where} did not prove it is the hub: ${refusal.why}` };
    case 'broken':
      return { ok: false, reason: 'closed', detail: refusal.why };
  }
}
