import type { ProofBinding } from '../../shared/hub-auth.js';
import type { Welcome } from '../../shared/peer-calls.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import type { HubKey } from '../../kit/rows/settings-schema.js';
import type { ConnectionState } from '../../kit/rows/rows.js';
import { DeviceConnection, type DeviceConnectionOptions, type DeviceEvent, type KeyStore, type PairingRefusal } from '../../phone/device-connection.js';
import { ManualClock, TEST_KEY, TEST_KEY_ID, fakeSockets, pairHub as pairClient, proveHub as proveClient, welcomeOf, type FakeSocket } from '../helpers/hub-fakes.js';

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

/**
 * The hub's side of the handshake with the page: its proof of `secret` (or a forged one, or one bound elsewhere) as the
 * answer to the hello, then it checks ours. Returns the auth call's id (empty when the proof was forged: no auth comes),
 * for the test to answer with the welcome (or anything else).
 */
export function proveHub(socket: FakeSocket, secret: string, options: { forge?: boolean; binding?: ProofBinding } = {}): Promise<{ hubNonce: string; peerNonce: string; authId: string }> {
  return proveClient(socket, secret, BINDING, { ...(options.forge ? { forge: true } : {}), ...(options.binding ? { bindElsewhere: options.binding } : {}) });
}

/** A pairing as the hub does it: the code proved, then the auth answered with `key` sealed with it and the welcome. */
export function pairHub(socket: FakeSocket, code: string, key = TEST_KEY, keyId = TEST_KEY_ID, welcomed: Welcome = welcome()): Promise<void> {
  return pairClient(socket, code, BINDING, key, keyId, welcomed);
}

/** A device's welcome: what is pending, and the hub's recent history. */
export function welcome(pending: RequestView[] = [], recent: RequestView[] = []): Welcome {
  return welcomeOf({ pending, recent });
}

/** The whole handshake with this phone's key (or code), ending with the answer to auth carrying `welcomed`. */
export async function welcomeHub(socket: FakeSocket, secret: string, welcomed: Welcome = welcome()): Promise<void> {
  const { authId } = await proveHub(socket, secret);
  socket.answer(authId, { welcome: welcomed });
}

/** A connection on fakes, recording everything it tells the page. */
export function deviceHarness(key: HubKey | null = { keyId: TEST_KEY_ID, key: TEST_KEY }, overrides: Partial<DeviceConnectionOptions> = {}) {
  const clock = new ManualClock();
  const keys = new MemoryKeys(key);
  const { sockets, factory, last } = fakeSockets();
  const states: ConnectionState[] = [];
  const welcomes: { pending: RequestView[]; recent: RequestView[] }[] = [];
  const events: DeviceEvent[] = [];
  const refusals: PairingRefusal[] = [];
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
