import { Store } from '../kit/ui/store.js';
import type { ConnectionState } from '../kit/rows/rows.js';
import type { ReviewerClient, Decision } from '../kit/messages.js';
import { DeviceConnection, type DeviceConnectionOptions, type PairingRefusal } from './device-connection.js';
import { applyCreated, applyRemoved, applyWelcome, NO_REQUESTS, recordOutcome, type RequestLists } from './request-lists.js';

/** What the page's views read and do; the views are tested against one built from plain stores. */
export interface PhoneSession {
  /** null until the connection has said anything. */
  state: Store<ConnectionState | null>;
  lists: Store<RequestLists>;
  /** Why the last pairing attempt failed; cleared by the next one. */
  pairingRefused: Store<PairingRefusal | null>;
  /** The review components' client: decisions go to the hub as they are made; this page offers no rules. */
  client: ReviewerClient;
  pair(code: string, deviceName: string, serial?: number | null): void;
}

type Wiring = Omit<DeviceConnectionOptions, 'onState' | 'onWelcome' | 'onEvent' | 'onPairingRefused'>;

/** The connection's news into the stores the views read, and the review's decisions out through the connection. */
export function createPhoneSession(wiring: Wiring): { session: PhoneSession; connection: DeviceConnection } {
  const state = new Store<ConnectionState | null>(null);
  const lists = new Store<RequestLists>(NO_REQUESTS);
  const pairingRefused = new Store<PairingRefusal | null>(null);
  const { clock } = wiring;
  const connection = new DeviceConnection({
    ...wiring,
    onState: (next) => state.set(next),
    onWelcome: (pending, recent) => lists.set(applyWelcome(lists.get(), pending, recent, clock.now())),
    onEvent: (event) => {
      if (event.method === 'request.created') lists.set(applyCreated(lists.get(), event.params.request));
      else lists.set(applyRemoved(lists.get(), event.params.elicitationId, event.params.status, event.params.decidedVia, clock.now(), event.params.decidedBy));
    },
    onPairingRefused: (reason) => pairingRefused.set(reason),
  });
  const client: ReviewerClient = {
    async decide(decision: Decision) {
      const reply = await connection.decide(decision);
      if (reply.state === 'answered' && reply.ok) {
        // The shown hash was for the hub's check; the row remembers what the person decided.
        const { elicitationId, shownHash: _shown, passkey, ...outcome } = decision;
        lists.set(recordOutcome(lists.get(), elicitationId, passkey ? { ...outcome, passkey: true } : outcome));
      }
      return reply;
    },
    passkey: (method, params) => connection.passkey(method, params),
    shown: (elicitationId, shownHash) => {
      connection.shown(elicitationId, shownHash);
    },
    reconnect: () => {
      connection.ensure();
      return Promise.resolve();
    },
  };
  const session: PhoneSession = {
    state,
    lists,
    pairingRefused,
    client,
    pair(code, deviceName, serial = null) {
      pairingRefused.set(null);
      connection.pair(code, deviceName, serial);
    },
  };
  return { session, connection };
}
