import { normalizePairingCode } from '../shared/hub-auth.js';
import { MAX_FRAME_BYTES, type DecideParams, type RequestView } from '../shared/wire-protocol.js';
import { parseParams, type HubNotice, type Params, type Result } from '../shared/peer-calls.js';
import type { HubKey } from '../kit/rows/settings-schema.js';
import type { ConnectionState, PairingReason } from '../kit/rows/rows.js';
import { answeredReply } from '../kit/hub/decision-reply.js';
import { HubConnection, type Clock, type HubCredential, type HubTarget, type LinkState, type SocketFactory } from '../kit/hub/hub-connection.js';
import type { DecideReply, Decision, PasskeyMethod, PasskeyReply } from '../kit/messages.js';

export { WELCOME_TIMEOUT_MS, type Clock, type SocketLike } from '../kit/hub/hub-connection.js';

/** Where this phone keeps the key it was paired with (`device-key.ts` over IndexedDB; read from memory once loaded). */
export interface KeyStore {
  read(): HubCredential | null;
  /** Done before the welcome is applied: a key not kept is a pairing lost. */
  write(key: HubKey): void | Promise<void>;
  clear(): void;
}

/** Why the hub refused the QR's pairing code (the code is spent either way). */
export type PairingRefusal = Exclude<PairingReason, 'key_unknown'>;

/** What the hub tells a device after its welcome, besides answers to its own decisions. */
export type DeviceEvent = Extract<HubNotice, { method: 'request.created' | 'request.removed' }>;

export interface DeviceConnectionOptions {
  /** The hub's socket, at the page's own origin (`/phone/socket`). */
  url: string;
  /** The hub's own port (the page is served with it) and the page's origin: what every proof is bound to. */
  hubPort: number;
  origin: string;
  socketFactory: SocketFactory;
  clock: Clock;
  keys: KeyStore;
  client: { name: string; version: string };
  /** The header's state (kit/ui/connection-header.tsx); `pairing_needed` without a reason: no key on this phone. */
  onState(state: ConnectionState): void;
  onWelcome(pending: RequestView[], recent: RequestView[]): void;
  onEvent(event: DeviceEvent): void;
  /** A pairing attempt failed (the code is dropped either way). */
  onPairingRefused?(reason: PairingRefusal): void;
  log?(message: string): void;
  /** How long a decision waits for the hub's answer (default DECIDE_TIMEOUT_MS). */
  answerTimeoutMs?: number;
}

/** A decision's answer: after this the person is told it may not have been recorded, and may send it again. */
export const DECIDE_TIMEOUT_MS = 5000;

/** The hub's own port, what this phone proves, and (when pairing) what to call it. */
interface DeviceTarget extends HubTarget { deviceName: string; pairingSerial: number | null }

/**
 * The phone page's one socket to the hub: the kit's HubConnection with the role `device` (the hub proves first, bound
 * to its port and this page's origin; the sealed key is kept before the welcome; welcome timeout, heartbeat and backoff
 * as there). What is the phone's own: its key (IndexedDB, device-key.ts), pairing with the QR's code,
 * and what a refusal means here. The hub removing this phone (close 4003) drops the key: the page then says it is no
 * longer paired and does not knock again. Decisions go only over a welcomed socket and wait a bounded time for their
 * answer; the phone keeps no outbox (nothing is said to be saved that is not).
 */
export class DeviceConnection {
  private readonly link: HubConnection<DeviceTarget>;
  private pairing: { code: string; deviceName: string; serial: number | null } | null = null;
  /** A decision whose answer never came: sent again as it was, it carries the same key so the hub can tell. */
  private unanswered: { fingerprint: string; key: string } | null = null;

  constructor(private readonly options: DeviceConnectionOptions) {
    const { keys } = options;
    this.link = new HubConnection<DeviceTarget>({
      socketFactory: options.socketFactory,
      clock: options.clock,
      client: options.client,
      role: 'device',
      url: () => options.url,
      binding: () => ({ port: options.hubPort, role: 'device', origin: options.origin }),
      target: () => ({ port: options.hubPort, key: keys.read(), pairingCode: this.pairing?.code ?? '', deviceName: this.pairing?.deviceName ?? '', pairingSerial: this.pairing?.serial ?? null }),
      pairingHello: (target) => ({ deviceName: target.deviceName, ...(target.pairingSerial === null ? {} : { pairingSerial: target.pairingSerial }) }),
      onPaired: (_target, key) => {
        // The code is spent: from now on this phone proves its own key.
        this.pairing = null;
        return keys.write(key);
      },
      onRefused: (_target, reason) => {
        if (reason === 'key_unknown') {
          keys.clear();
          return 'stop';
        }
        // The code is spent either way; with a key from before, the phone goes on with it.
        this.pairing = null;
        options.onPairingRefused?.(reason);
        return keys.read() ? 'retry' : 'stop';
      },
      onWelcome: (welcome) => options.onWelcome(welcome.pending, welcome.recent ?? []),
      onMessage: (message) => {
        if (message.method === 'request.created' || message.method === 'request.removed') options.onEvent(message);
      },
      onState: (state) => {
        const shown = this.deviceState(state);
        if (shown) options.onState(shown);
      },
      ...(options.log ? { log: options.log } : {}),
    });
  }

  get connected(): boolean {
    return this.link.connected;
  }

  /** Connects now unless a socket is open or opening; a pending backoff is cut short (the page came back into view). */
  ensure(): void {
    this.link.ensure();
  }

  /** Pairs with the code from the QR: whatever socket there is goes, and the next one proves the code. */
  /** `serial`: the code's serial from the QR link (`&n=`), so a code a newer one replaced is told apart. */
  pair(code: string, deviceName: string, serial: number | null = null): void {
    this.pairing = { code: normalizePairingCode(code), deviceName, serial };
    this.link.restart('pairing');
  }

  /** One of the hub's passkey calls (the page's Passkeys view, a review that needs one), answered within a bound. */
  async passkey(method: PasskeyMethod, raw: Record<string, unknown>): Promise<PasskeyReply> {
    const params = parseParams(method, raw);
    if (!params.success) return { state: 'error', message: `invalid ${method}: ${params.error.issues[0]?.message ?? ''}` };
    const answer = await this.link.call(method, params.data, this.options.answerTimeoutMs ?? DECIDE_TIMEOUT_MS);
    if ('unanswered' in answer) return answer.unanswered === 'not_connected' ? { state: 'not_connected' } : { state: 'no_answer' };
    return answer.ok ? { state: 'answered', ok: true, value: answer.value } : { state: 'answered', ok: false, code: answer.error.code, message: answer.error.message };
  }

  /** This device's push subscription at the hub: the VAPID key to subscribe with, and turning it on or off. */
  async push<M extends 'push.info' | 'push.subscribe'>(method: M, params: Params<M>): Promise<{ ok: true; value: Result<M> } | { ok: false; message: string }> {
    const answer = await this.link.call(method, params, this.options.answerTimeoutMs ?? DECIDE_TIMEOUT_MS);
    if ('unanswered' in answer) return { ok: false, message: answer.unanswered === 'not_connected' ? 'Not connected to the hub.' : 'The hub did not answer.' };
    return answer.ok ? { ok: true, value: answer.value } : { ok: false, message: answer.error.message };
  }

  /** Tells the hub a review is on this phone's screen (its ledger's `request.shown`); nothing when not connected. */
  shown(elicitationId: string, shownHash: string): void {
    this.link.notify({ method: 'request.shown', params: { elicitationId, shownHash } });
  }

  async decide(decision: Decision): Promise<DecideReply> {
    const fingerprint = JSON.stringify(decision);
    const idempotencyKey = this.unanswered?.fingerprint === fingerprint ? this.unanswered.key : crypto.randomUUID();
    const params: DecideParams = { idempotencyKey, ...decision };
    const bytes = new TextEncoder().encode(JSON.stringify({ id: 'c0000000000', method: 'decide', params })).length;
    if (bytes > MAX_FRAME_BYTES) {
      return { state: 'too_large', issues: [{ path: '(decision)', rule: 'too_large', message: `(decision): is ${bytes} bytes as JSON; a decision must fit in ${MAX_FRAME_BYTES} bytes` }] };
    }
    // A socket that goes while the call waits answers it at once (`closed`), not after its bound.
    const answer = await this.link.call('decide', params, this.options.answerTimeoutMs ?? DECIDE_TIMEOUT_MS);
    if ('unanswered' in answer) {
      if (answer.unanswered === 'not_connected') return { state: 'error', message: 'Not connected to the hub: your decision was not sent. Try again once the header says Connected.' };
      this.options.log?.(`a decision went unanswered: ${answer.error.message}`);
      this.unanswered = { fingerprint, key: idempotencyKey };
      return { state: 'error', message: 'The hub did not answer: your decision may or may not have been recorded. Submit again to retry it (the hub takes it once).' };
    }
    this.unanswered = null;
    if (!answer.ok) {
      if (answer.error.code === 'invalid') return answeredReply({ ok: false, reason: 'invalid', issues: answer.error.issues ?? [] });
      return { state: 'error', message: answer.error.code === 'unavailable' ? 'The hub could not record the decision: try again.' : `The hub refused the decision: ${answer.error.message}` };
    }
    return answeredReply(answer.value);
  }

  /** The header's state for the link's; null: leave the header as it is (a retry with the key under way). */
  private deviceState(state: LinkState): ConnectionState | null {
    const { since } = state;
    switch (state.state) {
      case 'connecting':
        return { state: this.pairing ? 'pairing' : 'connecting', since };
      case 'reconnecting': {
        if (state.retryAt === undefined) return this.pairing ? { state: 'pairing', since } : null;
        return { state: 'reconnecting', retryAt: state.retryAt, ...(state.detail ? { detail: state.detail } : {}), since };
      }
      case 'connected':
        return { state: 'connected', since };
      default:
        return state;
    }
  }
}
