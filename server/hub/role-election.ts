import type { Answer, AgentMethod, ApprovalService, Params, Result } from '../../shared/peer-calls.js';
import { fail } from '../../shared/peer-calls.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import type { ApprovalEngine } from '../approvals/approval-engine.js';
import type { RemoteHub } from '../config.js';
import { log } from '../log.js';
import type { Directory } from '../directory.js';
import type { StateDir } from '../state-dir.js';
import type { RemoteListen } from './hub-server.js';
import { HubServer } from './hub-server.js';
import { RelayClient } from './relay-client.js';

interface RoleElectionOptions {
  port: number;
  /**
   * The install key and the reviewer page's settings, and, unless `openDirectory` opens another, the directory (the
   * pairing codes and every paired or exported key); the store beside them is opened only by `openEngine`.
   */
  state: StateDir;
  /**
   * Opens the store and its engine, reading the team's routing policy from `directory`; called only after this
   * process bound the port.
   */
  openEngine: (directory: Directory) => Promise<ApprovalEngine>;
  /** Opens a team's directory (its database), before the engine; without it the state dir is the directory. */
  openDirectory?: () => Promise<OpenDirectory>;
  /** How long a call may look for a hub (binding or relaying) before it answers `unavailable`. Default 5 s. */
  findHubWithinMs?: number;
  handshakeTimeoutMs?: number;
  callTimeoutMs?: number;
  heartbeatMs?: number;
  /**
   * ELICITLY_HUB_URL + ELICITLY_HUB_KEY: the hub runs on another machine. This process only ever relays to it, with the
   * exported key: it never binds a port and never opens the store or the state dir, and a lost socket is followed by
   * reconnecting to the same URL (bounded by `findHubWithinMs`), never by a takeover.
   */
  remoteHub?: RemoteHub;
  /** Passed to the hub this process may become: the reviewer page's files, and the optional HTTPS listener. */
  phoneDir?: string;
  remoteListen?: RemoteListen;
  /** Push services besides the browsers' own a device may subscribe with (`ELICITLY_PUSH_SERVICES`). */
  pushServices?: readonly string[];
  /** Called once this process is the hub, its engine attached (the notifier); what it returns runs when the hub closes or steps down. */
  onHub?: (engine: ApprovalEngine, directory: Directory) => () => void;
}

/** A hub serves the calls through `service`: the engine's, with what the hub adds (`hub-service.ts`). */
type Role = { kind: 'hub'; hub: HubServer; engine: ApprovalEngine; directory?: OpenDirectory; service: ApprovalService; detach?: () => void } | { kind: 'relay'; relay: RelayClient };

/** A directory this process opened, and closes with its hub. */
export type OpenDirectory = Directory & { close(): Promise<void> };

const ROLE_RETRY_MS = 100;
/** After its store failed, a process leaves the port to the others for this long before it binds again itself. */
const STEP_DOWN_MS = 2000;
const ATTEMPTS = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Decides lazily, on the first approval call, whether this process is the hub or a relay. The bound port is the hub
 * lock: only the process that bound it opens the store, and only after binding, so there is one writer by
 * construction. A relay whose hub went away takes over at once; a hub whose store failed steps down.
 */
export class RoleElection implements ApprovalService {
  private current: Promise<Role> | undefined;
  private active: Role | undefined;
  private stepDownUntil = 0;
  /** Why the store did not open when this process last bound the port (cleared at each attempt). */
  private storeError: string | undefined;
  private closing = false;

  constructor(private readonly options: RoleElectionOptions) {}

  role(): 'hub' | 'relay' | 'none' {
    return this.active?.kind ?? 'none';
  }

  /** While this process is the hub: how many relays are connected to it (the `hub` command's idle check). */
  relaysConnected(): number | null {
    return this.active?.kind === 'hub' ? this.active.hub.relaysConnected() : null;
  }

  async call<M extends AgentMethod>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Answer<Result<M>>> {
    let answer: Answer<Result<M>> = fail('unavailable', 'the approval hub kept going away; try again');
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let role: Role;
      try {
        role = await this.elect();
      } catch (error) {
        return fail('unavailable', error instanceof Error ? error.message : String(error));
      }
      const service: ApprovalService = role.kind === 'hub' ? role.service : role.relay;
      answer = await service.call(method, params, signal);
      // Every call is safe to repeat (creation carries its id), but only on another hub: the same one would answer the same.
      if (answer.ok || answer.error.code !== 'unavailable' || signal?.aborted || this.active === role) return answer;
    }
    return answer;
  }

  /** Stops accepting, closes the store (draining it), then drops sockets: relays take over only once nothing writes. */
  async close(): Promise<void> {
    this.closing = true;
    const role = await this.current?.catch(() => undefined);
    this.current = undefined;
    this.active = undefined;
    if (role) await closeRole(role);
  }

  private elect(): Promise<Role> {
    this.current ??= this.findRole().then(
      (role) => {
        this.active = role;
        return role;
      },
      (error: unknown) => {
        this.current = undefined;
        throw error;
      },
    );
    return this.current;
  }

  private async findRole(): Promise<Role> {
    const { port, remoteHub } = this.options;
    const where = remoteHub?.url ?? `127.0.0.1:${port}`;
    const deadline = Date.now() + (this.options.findHubWithinMs ?? 5000);
    let last = 'nothing answered';
    while (Date.now() < deadline && !this.closing) {
      if (remoteHub === undefined && Date.now() >= this.stepDownUntil) {
        const hub = await this.becomeHub();
        if (hub) return hub;
      }
      const { handshakeTimeoutMs, callTimeoutMs } = this.options;
      // The install key is read afresh each time: a damaged key replaced by another process is picked up on the next attempt.
      const target = remoteHub ? { port: remoteHub.port, url: remoteHub.url, keyId: remoteHub.keyId, key: remoteHub.key } : { port, key: this.options.state.relayKey() };
      const connection = await RelayClient.connect({ ...target, handshakeTimeoutMs, callTimeoutMs });
      if (connection.ok) {
        const role: Role = { kind: 'relay', relay: connection.relay };
        connection.relay.onclose = () => this.lost(role);
        return role;
      }
      if (connection.reason === 'rejected' || (connection.reason === 'untrusted' && remoteHub)) {
        throw new Error(`${connection.detail}. Export a new key on the hub's computer (elicitly-companion key export) and set it as ELICITLY_HUB_KEY here`);
      }
      if (connection.reason === 'untrusted') {
        throw new Error(
          `something else holds 127.0.0.1:${port}: it answered but could not prove it is this computer's elicitly hub, so nothing was sent to it. ` +
            'Stop that program, or give elicitly-companion another port with ELICITLY_PORT (the same for every agent and the extension)',
        );
      }
      if (connection.reason === 'version_mismatch') {
        throw new Error(
          `a hub of another elicitly-companion version (${connection.detail}; this one speaks protocol ${PROTOCOL_VERSION}) holds ${where}: ` +
            (remoteHub ? 'run the same version on both machines' : 'restart the agents that run the other version, or give this one another ELICITLY_PORT'),
        );
      }
      last = `${connection.reason}: ${connection.detail}`;
      await sleep(ROLE_RETRY_MS);
    }
    if (this.closing) throw new Error('this server process is shutting down');
    if (remoteHub) throw new Error(`no approval hub could be reached at ${remoteHub.url} (ELICITLY_HUB_URL: is the tunnel up, and the hub running?) (${last})`);
    // The port was ours but the store would not open (a team's database down, say): that is the cause to name.
    if (this.storeError !== undefined) throw new Error(`this process could be the hub on 127.0.0.1:${port} but could not open the approval store: ${this.storeError}`);
    throw new Error(`no approval hub could be reached on 127.0.0.1:${port} and the port could not be bound (${last})`);
  }

  private async becomeHub(): Promise<Role | null> {
    this.storeError = undefined;
    const { port, state, heartbeatMs, phoneDir, remoteListen, pushServices } = this.options;
    const hub = await HubServer.listen({ port, state, heartbeatMs, phoneDir, remoteListen, ...(pushServices ? { pushServices } : {}) }).catch((error: unknown) => {
      log('warn', 'could not listen', { port, error: String(error) });
      return null;
    });
    if (!hub) return null;
    let directory: OpenDirectory | undefined;
    let engine: ApprovalEngine;
    try {
      directory = await this.options.openDirectory?.();
      engine = await this.options.openEngine(directory ?? state);
    } catch (error) {
      this.storeError = error instanceof Error ? error.message : String(error);
      log('error', 'bound the hub port but could not open the store; leaving the port to another process', { error: String(error) });
      this.stepDownUntil = Date.now() + STEP_DOWN_MS;
      await directory?.close();
      await hub.close();
      return null;
    }
    const keys = directory ?? state;
    const service = hub.attach(engine, keys);
    const role: Role = { kind: 'hub', hub, engine, ...(directory ? { directory } : {}), service, detach: this.options.onHub?.(engine, keys) };
    engine.onFailure(() => void this.stepDown(role));
    return role;
  }

  private stepDown(role: Role): Promise<void> {
    if (this.active !== role) return Promise.resolve();
    log('error', 'the approval store failed: this hub steps down so a healthy process takes over');
    this.active = undefined;
    this.current = undefined;
    this.stepDownUntil = Date.now() + STEP_DOWN_MS;
    return closeRole(role);
  }

  private lost(role: Role): void {
    if (this.active !== role) return;
    log('info', 'hub connection lost; taking over or reconnecting');
    this.active = undefined;
    this.current = undefined;
    // Take over at once, not on the next tool call: the extension needs a hub to reconnect to.
    if (!this.closing) this.elect().catch((error: unknown) => log('warn', 'takeover failed', { error: String(error) }));
  }
}

async function closeRole(role: Role): Promise<void> {
  if (role.kind === 'relay') {
    role.relay.onclose = undefined;
    role.relay.close();
    return;
  }
  role.detach?.();
  role.hub.stopAccepting();
  await role.engine.close();
  await role.hub.close();
  await role.directory?.close();
}

/** Where a command that asks the hub finds it: the port and the state dir, and how to open the store if it is the hub. */
export interface HubCommandOptions {
  port: number;
  state: StateDir;
  /** Opens the store, as the server's own election does: used only when no hub is running and the command becomes it. */
  openEngine: (directory: Directory) => Promise<ApprovalEngine>;
  /** A team's directory, opened as the server's election does. */
  openDirectory?: () => Promise<OpenDirectory>;
}

/**
 * Runs a command through the hub: a running hub is asked as a relay would (the install key, proved both ways); with
 * none running the command is the hub for the moment it takes, so every file keeps its one writer.
 */
export async function throughHub(options: HubCommandOptions, run: (service: ApprovalService) => Promise<number>): Promise<number> {
  const { openDirectory } = options;
  const election = new RoleElection({ port: options.port, state: options.state, openEngine: options.openEngine, ...(openDirectory ? { openDirectory } : {}), findHubWithinMs: 5000 });
  try {
    return await run(election);
  } finally {
    await election.close();
  }
}
