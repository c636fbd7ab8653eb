// A BackgroundController wired to fakes: a recording platform, fake sockets the test drives, manual time.
import { BackgroundController, type Platform } from '../../extension/background/background-controller.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import type { RequestRow } from '../../extension/db/rows.js';
import { PROTOCOL_VERSION, type RequestView } from '../../shared/wire-protocol.js';
import { FakeSocket, ManualClock, freshDb, proposalView, settle } from './fakes.js';

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
  controller(options?: { originNeedsPairing?: boolean; everConnected?: boolean; socketFactory?: (url: string, protocols: string[]) => FakeSocket }): BackgroundController;
  /** Starts the controller, opens its socket and welcomes it with `pending`. */
  connect(c: BackgroundController, pending?: RequestView[]): Promise<FakeSocket>;
  /** Lets the backoff run out and welcomes the next socket with `pending`. */
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
        originNeedsPairing: options.originNeedsPairing ?? false,
        everConnected: options.everConnected ?? false,
        answerTimeoutMs: 5000,
      });
    },
    async connect(c, pending = [proposalView('el_1', h.clock.t - 1000)]) {
      c.start();
      await settle();
      const socket = h.sockets.at(-1)!;
      socket.open();
      socket.deliver({ type: 'welcome', protocol: PROTOCOL_VERSION, hubPid: 1, pending });
      await settle();
      return socket;
    },
    async reconnect(pending) {
      const before = h.sockets.length;
      // Small steps, bounded by the longest backoff: only as much time passes as the reconnect needs.
      for (let waited = 0; h.sockets.length === before && waited <= 30_000; waited += 250) {
        h.clock.advance(250);
        await settle();
      }
      const socket = h.sockets.at(-1)!;
      if (h.sockets.length === before) throw new Error('no new socket was opened');
      socket.open();
      socket.deliver({ type: 'welcome', protocol: PROTOCOL_VERSION, hubPid: 1, pending });
      await settle();
      return socket;
    },
  };
  return h;
}
