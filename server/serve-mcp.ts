import { readFile } from 'node:fs/promises';
import type { Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { burstCollector } from './burst-collector.js';
import type { Config } from './config.js';
import { LazyApprovals } from './lazy-approvals.js';
import { log } from './log.js';
import { createServer } from './mcp/create-server.js';
import type { StdioTapTransport } from './mcp/stdio-tap-transport.js';
import type { Directory } from './directory.js';
import type { StateDir } from './state-dir.js';
import type { EngineOptions } from './approvals/approval-engine.js';

const DAY_MS = 86_400_000;

/** Where the built files the server reads on demand are: the review app's HTML and the phone page's folder. */
export interface BuiltFiles {
  appHtml: URL | string;
  phoneDir: string;
}

/**
 * The store's engine as this configuration opens it: the role election's hub, and the `rules` command with no hub
 * running; the team's routing policy read from the directory (the state dir's `routing.json`, or the database's).
 */
export async function openEngine(config: Config, directory: Pick<Directory, 'routingReader' | 'ledgerKey'>) {
  const [{ ApprovalEngine }, { realPath }] = await Promise.all([import('./approvals/approval-engine.js'), import('./real-path.js')]);
  const { databaseUrl } = config;
  return ApprovalEngine.open({
    dir: config.stateDir,
    // The client for a team's database is loaded only when one is configured.
    ...(databaseUrl === undefined ? {} : await teamStores(databaseUrl, directory)),
    retentionMs: config.retentionDays * DAY_MS,
    ...(config.ledgerRetentionDays === undefined ? {} : { ledgerRetentionMs: config.ledgerRetentionDays * DAY_MS }),
    paths: { home: config.userHome, real: realPath },
    routing: directory.routingReader(),
  });
}

/**
 * The engine's stores in a team's database: the requests, the rules and the passkeys, each appending its changes' entries
 * to the team's ledger in the change's own transaction, and the ledger itself, signed with the directory's team key.
 */
export async function teamStores(url: string, directory: Pick<Directory, 'ledgerKey'>, options: { checkpoint?: { every?: number; ms?: number } } = {}) {
  const [{ PgRecordStore }, { PgRulesStore }, { PgLedger, passkeyRows, requestRows, ruleRows }] = await Promise.all([
    import('./store/pg-record-store.js'),
    import('./store/pg-rules-store.js'),
    import('./ledger/pg-ledger.js'),
  ]);
  const stores: Pick<EngineOptions, 'requests' | 'rules' | 'passkeys' | 'openLedger'> = {
    requests: (parse) => PgRecordStore.open({ url, parse, ledger: requestRows }),
    rules: (parse, max) => PgRulesStore.open({ url, parse, max, ledger: ruleRows }),
    passkeys: (parse, max) => PgRulesStore.open({ url, parse, max, list: 'passkeys', ledger: passkeyRows }),
    openLedger: async ({ leads }) => PgLedger.open({ url, key: await directory.ledgerKey(), leads, checkpointEvery: options.checkpoint?.every, checkpointMs: options.checkpoint?.ms }),
  };
  return stores;
}

/** A team's directory (its database): the client is loaded only when one is configured. */
export async function openDirectory(url: string) {
  const { PgDirectory } = await import('./store/pg-directory.js');
  return PgDirectory.open({ url });
}

/** How a role election opens the configured team's directory; nothing without a database (the state dir is it). */
export function teamDirectory({ databaseUrl }: Pick<Config, 'databaseUrl'>): { openDirectory?: () => ReturnType<typeof openDirectory> } {
  return databaseUrl === undefined ? {} : { openDirectory: () => openDirectory(databaseUrl) };
}

/**
 * The approval machinery, loaded on first use: the role election, and what this process runs once it is the hub (its
 * engine, the phone page and listener, the notifier). One definition for the MCP server and the `hub` command.
 */
export async function newElection(config: Config, state: StateDir, files: Pick<BuiltFiles, 'phoneDir'>) {
  const [{ RoleElection }, { startNotifier }] = await Promise.all([import('./hub/role-election.js'), import('./remote/notifier.js')]);
  return new RoleElection({
    port: config.port,
    state,
    remoteHub: config.remoteHub,
    openEngine: (directory) => openEngine(config, directory),
    ...teamDirectory(config),
    phoneDir: config.phoneDir ?? files.phoneDir,
    remoteListen: config.remoteListen,
    pushServices: config.pushServices,
    onHub: (engine, directory) => {
      const stopNotifier = startNotifier({ engine, settings: state.remoteReader(), port: config.port, push: { directory, services: config.pushServices ?? [] } });
      // Each change to a request is a unit of the hub's work: a burst of them is followed by a full collection.
      const collector = burstCollector();
      const unsubscribe = engine.onEvent(() => collector.work());
      return () => {
        stopNotifier();
        unsubscribe();
        collector.stop();
      };
    },
  });
}

/** The MCP server on one connection, and how to end it: the connection first, then whatever the approvals opened. */
export interface McpServing {
  approvals: LazyApprovals;
  close(): Promise<void>;
}

/**
 * The MCP server on `transport`: the process's stdio in `main.ts`, a pair of in-memory streams in the tests' in-process
 * harness. Nothing is bound, opened or even loaded here: hosts spawn throw-away servers, so the hub is elected on the
 * first approval call.
 */
export function serveMcp(config: Config, state: StateDir, transport: StdioTapTransport & Transport, files: BuiltFiles): McpServing {
  const approvals = new LazyApprovals(() => newElection(config, state, files));
  const handle = serveStdio(
    (ctx) =>
      createServer(ctx, {
        handshake: () => transport.initialize,
        clientCapabilities: () => transport.clientCapabilities,
        appHtml: () => readFile(files.appHtml, 'utf8'),
        // A hub on another machine takes no decision from this process's key: the review in the chat could not decide.
        appSurface: config.remoteHub === undefined,
        approvals,
        minTimeoutSeconds: config.minTimeoutSeconds,
        retentionDays: config.retentionDays,
        probeTimeoutMs: config.probeTimeoutMs,
        automaticNoMs: config.automaticNoMs,
        companion: { port: config.port, stateDir: config.stateDir, role: () => approvals.role() },
      }),
    { transport, onerror: (error) => log('warn', 'mcp error', { error: error.message }) },
  );
  return {
    approvals,
    async close() {
      await handle.close().catch(() => undefined);
      await approvals.close();
    },
  };
}
