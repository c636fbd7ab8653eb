import type { ProofBinding } from '../../shared/hub-auth.js';
import { PROTOCOL_VERSION, type HubMessage, type RequestView } from '../../shared/wire-protocol.js';
import type { HubKey } from '../../extension/db/settings-schema.js';
import { DeviceConnection, type DeviceConnectionOptions, type DeviceEvent, type DeviceState, type KeyStore, type NotPairedReason } from '../../phone/device-connection.js';
import { ManualClock, TEST_KEY, TEST_KEY_ID, fakeSockets, pairHub as pairClient, proveHub as proveClient, type FakeSocket } from '../helpers/hub-fakes.js';

export { FakeSocket, ManualClock, TEST_CODE, TEST_KEY, TEST_KEY_ID, fakeSockets, nextSent, proposalView, settle, until } from '../helpers/hub-fakes.js';

export const HUB_PORT = 17391;
/** The page as a tunnel serves it: the origin is not the hub's loopback address, and the port the phone dialled is 443. */
export const ORIGIN = 'https://laptop.tailnet.example';
export const BINDING: ProofBinding = { port: HUB_PORT, role: 'device', origin: ORIGIN };

export class MemoryKeys implements KeyStore {
  constructor(public key: HubKey | null = null) {}
  read(): HubKey | null { return this.key; }
  write(key: HubKey): void { this.key = key; }
  clear(): void { this.key = null; }
}

/** The hub's side of the handshake with the page: its proof of `secret` (or a forged one, or one bound elsewhere), then it checks ours. */
export function proveHub(socket: FakeSocket, secret: string, options: { forge?: boolean; binding?: ProofBinding } = {}): Promise<{ hubNonce: string; peerNonce: string }> {
  return proveClient(socket, secret, BINDING, { ...(options.forge ? { forge: true } : {}), ...(options.binding ? { bindElsewhere: options.binding } : {}) });
}

export function pairHub(socket: FakeSocket, code: string, key = TEST_KEY, keyId = TEST_KEY_ID): Promise<void> {
  return pairClient(socket, code, BINDING, key, keyId);
}

export function welcome(pending: RequestView[] = [], recent: RequestView[] = []): HubMessage {
  return { type: 'welcome', protocol: PROTOCOL_VERSION, hubPid: 1, pending, rules: [], recent };
}

/** A connection on fakes, recording everything it tells the page. */
export function deviceHarness(key: HubKey | null = { keyId: TEST_KEY_ID, key: TEST_KEY }, overrides: Partial<DeviceConnectionOptions> = {}) {
  const clock = new ManualClock();
  const keys = new MemoryKeys(key);
  const { sockets, factory, last } = fakeSockets();
  const states: DeviceState[] = [];
  const welcomes: { pending: RequestView[]; recent: RequestView[] }[] = [];
  const events: DeviceEvent[] = [];
  const refusals: NotPairedReason[] = [];
  const connection = new DeviceConnection({
    url: `${ORIGIN.replace(/^http/, 'ws')}/phone/socket`,
    hubPort: HUB_PORT,
    origin: ORIGIN,
    socketFactory: factory,
    clock,
    keys,
    client: { name: 'elicitly-phone', version: 'test' },
    onState: (s) => states.push(s),
    onWelcome: (pending, recent) => welcomes.push({ pending, recent }),
    onEvent: (e) => events.push(e),
    onPairingRefused: (r) => refusals.push(r),
    ...overrides,
  });
  return { clock, keys, sockets, states, welcomes, events, refusals, connection, last, state: () => states.at(-1) };
}
