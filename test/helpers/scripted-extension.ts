import WebSocket from 'ws';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { constantTimeEqual, hubProof, newNonce, peerProof } from '../../shared/hub-auth.js';
import type { Welcome } from '../../shared/peer-calls.js';
import { PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { ScriptedPeer } from './scripted-peer.js';

export interface PairedKey {
  /** None for a relay: it proves the install key. */
  keyId?: string;
  key: string;
}

/** The key an extension of `origin` holds for the hub of this state dir: paired once, as `pair` and the Pair button would. */
export function pairedKey(dir: string, origin = EXTENSION_ORIGIN): PairedKey {
  const state = new StateDir(dir);
  const entry = state.pairedExtensions().find((e) => e.origin === origin) ?? state.addPairedExtension(origin);
  return { keyId: entry.keyId, key: entry.key };
}

export interface ScriptedOptions {
  origin?: string;
  protocols?: string[];
  /** false: open the socket only; the test runs `handshake()` (or sends its own frames). */
  hello?: boolean;
  /** The key to prove. Without one the handshake cannot succeed (a test of that passes `key` explicitly). */
  key?: PairedKey;
  /** A relay sends no Origin and proves the install key (`new StateDir(dir).relayKey()`), or an exported key by id. */
  role?: 'extension' | 'relay';
}

/**
 * A stand-in for the browser extension (or, with role 'relay', another server process): it speaks the peer call map
 * with the pinned Origin, scripted by the test.
 */
export class ScriptedExtension extends ScriptedPeer {
  private constructor(
    socket: WebSocket,
    private readonly key: PairedKey | undefined,
    private readonly role: 'extension' | 'relay',
    /** The port dialled: every proof is bound to it. */
    readonly port: number,
  ) {
    super(socket);
  }

  static async connect(port: number, options: ScriptedOptions = {}): Promise<ScriptedExtension> {
    const role = options.role ?? 'extension';
    const socket = new WebSocket(`ws://127.0.0.1:${port}`, options.protocols ?? [SUBPROTOCOL], role === 'relay' ? {} : { origin: options.origin ?? EXTENSION_ORIGIN });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    const ext = new ScriptedExtension(socket, options.key, role, port);
    if (options.hello !== false) await ext.handshake();
    return ext;
  }

  /** hello, the hub's proof checked, our proof in `auth`, whose answer is the welcome: what the real extension does first. */
  async handshake(key: PairedKey | undefined = this.key): Promise<Welcome> {
    if (!key) throw new Error('ScriptedExtension: no key to prove; pass one from pairedKey(dir)');
    const nonce = newNonce();
    const { role } = this;
    const challenge = await this.call('hello', { protocol: PROTOCOL_VERSION, role, client: { name: `scripted-${role}`, version: '1' }, nonce, ...(key.keyId ? { keyId: key.keyId } : {}) });
    if (!challenge.result) throw new Error(`the hub refused the hello: ${JSON.stringify(challenge.error)}`);
    if (!constantTimeEqual(challenge.result.proof, await hubProof(key.key, { port: this.port, role }, nonce, challenge.result.nonce))) throw new Error('the hub did not prove the key');
    const auth = await this.call('auth', { proof: await peerProof(key.key, { port: this.port, role }, challenge.result.nonce, nonce) });
    if (!auth.result) throw new Error(`the hub refused the auth: ${JSON.stringify(auth.error)}`);
    return auth.result.welcome;
  }
}

/** Below the kernel's ephemeral range (32768 and up on Linux), where no outgoing connection of a test takes a port. */
const PORTS = { from: 20_000, per: 3_000, slices: 4 } as const; // 4 slices: vitest.config.ts runs 4 workers

/**
 * A port for a test's hub: random in this worker's own slice of 20000–31999 (vitest numbers its parallel workers), so
 * two files running at once never draw the same port, and no outgoing socket holds one.
 */
export function freePort(): number {
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  const slice = (Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % PORTS.slices;
  // Never one this process drew before: a file that keeps several hubs open (ask-routing keeps each describe's) drew a
  // port one of them still held about once in four CI runs, and its new extension then spoke to the wrong hub.
  if (drawn.size >= PORTS.per) drawn.clear();
  const start = Math.floor(Math.random() * PORTS.per);
  // From a random place, the first one not drawn yet: at most one pass over the slice.
  for (let i = 0; i < PORTS.per; i++) {
    const port = PORTS.from + slice * PORTS.per + ((start + i) % PORTS.per);
    if (!drawn.has(port)) {
      drawn.add(port);
      return port;
    }
  }
  throw new Error('freePort: every port of this worker was drawn');
}
const drawn = new Set<number>();
