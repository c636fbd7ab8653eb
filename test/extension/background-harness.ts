// A BackgroundController wired to fakes: a recording platform, fake sockets the test drives, manual time, and a hub
// that proves the key this browser holds.
import { BackgroundController, type Platform } from '../../extension/background/background-controller.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import { hubKeyFor } from '../../kit/rows/settings-schema.js';
import { patchSettings, readSettings } from '../../extension/db/settings-repo.js';
import type { Rule } from '../../shared/rules.js';
import { DecideParamsSchema, type DecideParams, type RequestView } from '../../shared/wire-protocol.js';
import { proveHub, welcomeHub } from '../helpers/hub-fakes.js';
import { FakeSocket, ManualClock, TEST_KEY, TEST_KEY_ID, bindingOf, freshDb, proposalView, settle } from './fakes.js';

export class RecordingPlatform implements Platform {
  badge: number[] = [];
  notified: RequestRow[] = [];
  cleared: string[] = [];
  private n = 0;
  async setBadge(count: number) { this.badge.push(count); }
  async notify(row: RequestRow) { this.notified.push(row); }
  async clearNotification(id: string) { this.cleared.push(id); }
  newKey() { return `key-${++this.n}`; }
}

export interface Harness {
  db: ElicitlyDb;
  clock: ManualClock;
  platform: RecordingPlatform;
  sockets: FakeSocket[];
  controller(options?: { socketFactory?: (url: string, protocols: string[]) => FakeSocket; log?: (message: string) => void }): BackgroundController;
  /** Stores TEST_KEY as this browser's key for the hub on the port in settings (as a past pairing would have). */
  paired(): Promise<void>;
  /** Pairs (if not yet), starts the controller, opens its socket, proves the key and welcomes it with `pending`. */
  connect(c: BackgroundController, pending?: RequestView[]): Promise<FakeSocket>;
  /** Opens `socket`, proves the key like the real hub, and welcomes it with `pending` (and `rules`). */
  accept(socket: FakeSocket, pending?: RequestView[], rules?: Rule[]): Promise<void>;
  /** Lets the backoff run out (bounded) and returns the next socket, unopened. */
  nextSocket(): Promise<FakeSocket>;
  /** Lets the backoff run out and accepts the next socket with `pending`. */
  reconnect(pending: RequestView[]): Promise<FakeSocket>;
}

export function harness(): Harness {
  const h: Harness = {
    db: freshDb(),
    clock: new ManualClock(),
    platform: new RecordingPlatform(),
    sockets: [],
    controller(options = {}) {
      return new BackgroundController({
        db: h.db,
        platform: h.platform,
        clock: h.clock,
        socketFactory: (url, protocols) => {
          const s = options.socketFactory?.(url, protocols) ?? new FakeSocket(url, protocols);
          h.sockets.push(s);
          return s;
        },
        client: { name: 'test', version: '1' },
        answerTimeoutMs: 5000,
        ...(options.log ? { log: options.log } : {}),
      });
    },
    async paired() {
      const settings = await readSettings(h.db);
      if (hubKeyFor(settings, settings.port)) return;
      await patchSettings(h.db, { hubKeys: { ...settings.hubKeys, [String(settings.port)]: { keyId: TEST_KEY_ID, key: TEST_KEY } } });
    },
    async connect(c, pending = [proposalView('el_1', h.clock.t - 1000)]) {
      await h.paired();
      c.start();
      await settle();
      const socket = h.sockets.at(-1)!;
      await h.accept(socket, pending);
      return socket;
    },
    async accept(socket, pending = [], rules = []) {
      socket.open();
      // The hub answers the hello with its proof, then the auth with the welcome.
      await welcomeHub(socket, TEST_KEY, bindingOf(socket), { pending, rules });
      await settle();
    },
    async nextSocket() {
      const before = h.sockets.length;
      // Small steps, bounded by the longest backoff: only as much time passes as the reconnect needs.
      for (let waited = 0; h.sockets.length === before && waited <= 30_000; waited += 250) {
        h.clock.advance(250);
        await settle();
      }
      if (h.sockets.length === before) throw new Error('no new socket was opened');
      return h.sockets.at(-1)!;
    },
    async reconnect(pending) {
      const socket = await h.nextSocket();
      await h.accept(socket, pending);
      return socket;
    },
  };
  return h;
}

/**
 * The hub's side of the handshake up to the proofs: it proves `secret` on `socket` and checks the extension's proof.
 * Returns the auth call's id, for the test to answer with the welcome (or anything else) when it chooses.
 */
export async function proveExtension(socket: FakeSocket, secret = TEST_KEY): Promise<string> {
  return (await proveHub(socket, secret, bindingOf(socket))).authId;
}

/** A decide call the extension sent: its id (to answer it by) and its params, checked against the call map's schema. */
export interface DecideCall {
  id: string;
  params: DecideParams;
}

/** Every decide call the extension sent on `socket`, in order. */
export function decideCalls(socket: FakeSocket): DecideCall[] {
  return socket.sent.filter((m) => m.method === 'decide').map((m) => {
    if (m.id === undefined) throw new Error('a decide was sent as a notice, not a call');
    return { id: m.id, params: DecideParamsSchema.parse(m.params) };
  });
}
