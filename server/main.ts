import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpText } from './cli-help.js';
import { infoFlag, parseConfig } from './config.js';
import { log, setLogLevel } from './log.js';
import { takeOverHandshake } from './mcp/fast-handshake.js';
import { StdioTapTransport } from './mcp/stdio-tap-transport.js';
import { packageInfo } from './package-info.js';
import { runPairCommand } from './pair-command.js';
import { realPath } from './real-path.js';
import { serveHint } from './start-options.js';
import type { Directory } from './directory.js';
import { newElection as electionFor, openDirectory, openEngine, serveMcp, teamDirectory } from './serve-mcp.js';
import { StateDir } from './state-dir.js';
import { releaseYoungGeneration } from './young-generation.js';

/** How long closing may take once a host asked us to go; past it the process exits anyway, so a host is never stuck with it. */
const SHUTDOWN_GRACE_MS = 3000;
/** The review app, built beside the bundle (scripts/build-server.mjs copies it there); read only when a host asks. */
const APP_HTML = new URL('./review-app.html', import.meta.url);
/** The reviewer page and its icons, built beside the bundle (scripts/build-server.mjs); read by the hub when a phone asks. */
const PHONE_DIR = fileURLToPath(new URL('./phone/', import.meta.url));
/** How long a PostToolUse hook may take: it only withdraws a request, and the host waits for it. */
const ANSWERED_HOOK_SECONDS = 8;

/** This install's entry point: what `hooks install` writes into a host's settings and a hook starts a hub with. */
const SCRIPT = resolve(process.argv[1] ?? fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const flag = infoFlag(argv);
if (flag !== null) {
  process.stdout.write(flag === 'help' ? helpText() : `${packageInfo.version}\n`);
  process.exit(0);
}
const parsed = parseConfig(argv, process.env);
if (!parsed.ok) {
  process.stderr.write(`elicitly-companion: cannot start:\n${parsed.issues.map((issue) => `  ${issue}`).join('\n')}\n`);
  // A hook's exit 2 blocks the agent's tool call in both hosts: a hook that cannot run must fall back (exit 0), never block.
  process.exit(argv[0] === 'hook' ? 0 : 2);
}
const config = parsed.config;
setLogLevel(config.logLevel);
const state = new StateDir(config.stateDir);

const files = { appHtml: APP_HTML, phoneDir: PHONE_DIR };
const newElection = () => electionFor(config, state, files);

/**
 * The directory a command changes: the state dir's, or a team's database's (ELICITLY_DATABASE_URL), closed once the
 * command is done.
 */
async function withDirectory(run: (directory: Directory) => Promise<number>): Promise<number> {
  if (config.databaseUrl === undefined) return run(state);
  const directory = await openDirectory(config.databaseUrl);
  try {
    return await run(directory);
  } finally {
    await directory.close();
  }
}

if (config.command === 'pair') {
  try {
    process.exitCode = await withDirectory((directory) => runPairCommand(directory, config.pair));
  } catch (error) {
    process.stderr.write(`elicitly-companion pair: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} else if ((config.command === 'remote' && config.remote) || (config.command === 'key' && config.key)) {
  const io = { stdout: (text: string) => process.stdout.write(text), stderr: (text: string) => process.stderr.write(text) };
  try {
    if (config.remote) {
      const { runRemoteCommand } = await import('./remote/remote-command.js');
      const [{ ensurePageHub }, { hubStatus }, { spawnDetachedHub }] = await Promise.all([import('./remote/page-hub.js'), import('./hub/status-command.js'), import('./hook/spawn-hub.js')]);
      const probeStates = { running: 'hub', not_our_hub: 'other', no_hub: 'none' } as const;
      const ensureHub = () =>
        ensurePageHub({
          probe: async () => probeStates[(await hubStatus(config.port, state)).state],
          spawn: () => spawnDetachedHub(process.execPath, SCRIPT, config.port, process.env),
          pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        });
      const action = config.remote;
      process.exitCode = await withDirectory((directory) => runRemoteCommand({ state, directory, port: config.port, action, json: config.json, io, ensureHub }));
    } else if (config.key) {
      const { runKeyCommand } = await import('./remote/key-command.js');
      const action = config.key;
      process.exitCode = await withDirectory((directory) => runKeyCommand({ state: directory, port: config.port, action, io }));
    }
  } catch (error) {
    process.stderr.write(`elicitly-companion ${config.command}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} else if (config.command === 'reviewer' && config.reviewer) {
  const { runReviewerCommand } = await import('./reviewer-command.js');
  try {
    const action = config.reviewer;
    process.exitCode = await withDirectory((directory) => runReviewerCommand(directory, action, config.json, { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) }));
  } catch (error) {
    process.stderr.write(`elicitly-companion reviewer: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} else if (config.command === 'routing' && config.routing) {
  const { runRoutingCommand } = await import('./routing-command.js');
  try {
    const action = config.routing;
    const where = config.databaseUrl === undefined ? join(config.stateDir, 'routing.json') : 'the team\'s database';
    process.exitCode = await withDirectory((directory) => runRoutingCommand(directory, action, where, { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) }));
  } catch (error) {
    process.stderr.write(`elicitly-companion routing: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} else if (config.command === 'status') {
  const { hubStatus, formatStatus, statusExitCode } = await import('./hub/status-command.js');
  const status = await hubStatus(config.port, state);
  process.stdout.write(config.json ? `${JSON.stringify(status)}\n` : formatStatus(status));
  process.exitCode = statusExitCode(status);
} else if (config.command === 'rules') {
  const { runRulesCommand } = await import('./hub/rules-command.js');
  process.exitCode = await runRulesCommand(
    {
      port: config.port,
      state,
      openEngine: (directory) => openEngine(config, directory),
      ...teamDirectory(config),
      action: config.rules,
      json: config.json,
    },
    (text) => process.stdout.write(text),
  );
} else if (config.command === 'passkey') {
  const { runPasskeyCommand } = await import('./hub/passkey-command.js');
  process.exitCode = await runPasskeyCommand(
    { port: config.port, state, openEngine: (directory) => openEngine(config, directory), ...teamDirectory(config), action: config.passkey, json: config.json },
    (text) => process.stdout.write(text),
  );
} else if (config.command === 'audit' && config.audit) {
  const [{ runAuditCommand }, { ledgerKey }] = await Promise.all([import('./ledger/audit-command.js'), import('./ledger/ledger-key.js')]);
  const [audit, out, err] = [config.audit, (text: string) => process.stdout.write(text), (text: string) => process.stderr.write(text)];
  const { databaseUrl } = config;
  // A team's ledger is its database's, signed with the team's key; one person's is the state dir's.
  process.exitCode =
    databaseUrl === undefined
      ? await runAuditCommand({ ledger: config.stateDir, key: ledgerKey(config.stateDir) }, audit, out, err)
      : await withDirectory(async (directory) => {
          const [{ withTeamLedger }, key] = await Promise.all([import('./ledger/pg-ledger.js'), directory.ledgerKey()]);
          return withTeamLedger(databaseUrl, (ledger) => runAuditCommand({ ledger, key }, audit, out, err));
        });
} else if (config.command === 'hook' && config.hook) {
  const hook = config.hook;
  const [{ runHook }, { spawnDetachedHub }, { WaitingPrompts, waitingDir }] = await Promise.all([
    import('./hook/hook-command.js'),
    import('./hook/spawn-hub.js'),
    import('./hook/waiting-prompts.js'),
  ]);
  // The host kills the hook at its timeout: whatever hangs, this ends it first, printing nothing (the host's own
  // prompt). A PostToolUse hook only withdraws a request: a few seconds bound it.
  setTimeout(() => {
    process.stderr.write('elicitly-companion hook: out of time; the host shows its own prompt\n');
    process.exit(0);
  }, (hook.host.answeredEvents.includes(hook.event) ? ANSWERED_HOOK_SECONDS : hook.waitSeconds + 5) * 1000).unref();
  const run = await runHook({
    ...hook,
    port: config.port,
    state,
    remoteHub: config.remoteHub,
    stdin: process.stdin,
    spawnHub: () => spawnDetachedHub(process.execPath, SCRIPT, config.port, process.env),
    waiting: new WaitingPrompts(waitingDir(config.stateDir)),
    paths: { home: config.userHome, real: realPath },
    // Claude Code ends a hook whose prompt was answered "No" in its terminal, or whose time ran out, with SIGTERM (and
    // SIGKILL 1.5 s later): the request goes now. Without a handler Node would exit too, but before the mark is cleared.
    onTerminate: (withdraw) => {
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
        process.once(signal, () => {
          withdraw();
          process.exit(0);
        });
      }
    },
  });
  // stdout is the host's: the decision JSON and nothing else (or what says nothing, to a host that would read stderr).
  const printed = run.output ?? hook.host.silence;
  if (printed) process.stdout.write(`${JSON.stringify(printed)}\n`);
  process.stderr.write(`elicitly-companion hook ${hook.event}: ${run.output ? '' : 'no decision, the host decides: '}${run.outcome}\n`);
  process.exit(0);
} else if (config.command === 'hooks' && config.hooks) {
  const { runHooksCommand } = await import('./hook/hooks-command.js');
  try {
    const [{ waitingDir }, { statusProbe }] = await Promise.all([import('./hook/waiting-prompts.js'), import('./hook/status-probe.js')]);
    const end = await runHooksCommand({
      action: config.hooks,
      dirs: { user: config.hostDirs, cwd: process.cwd() },
      node: process.execPath,
      script: SCRIPT,
      waitingDir: waitingDir(config.stateDir),
      env: config.hookEnv,
      probe: statusProbe(config.port, config.remoteHub),
    });
    (end.code === 0 ? process.stdout : process.stderr).write(end.text);
    process.exitCode = end.code;
  } catch (error) {
    process.stderr.write(`elicitly-companion hooks: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} else if (config.command === 'hub') {
  // A hub's life is its work, not an idle start beside a host: V8's young generation grows as it does for the MCP
  // server after its first request (held small, a burst of creates spent its time in scavenges).
  releaseYoungGeneration();
  const [election, { runHubCommand }] = await Promise.all([newElection(), import('./hook/hub-command.js')]);
  const stop = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  // The phone page's link works only while a hub runs: while it is on, this one stays (`remote disable` lets it idle out).
  // A team's hub (a database) serves people on other machines whether or not anything is pending: it stays too.
  const serving = config.databaseUrl !== undefined;
  const end = await runHubCommand({ election, idleMs: config.hubIdleSeconds * 1000, stop, needed: () => serving || state.remote().enabled });
  process.stderr.write(`elicitly-companion hub: ${end.message}\n`);
  process.exit(end.code);
} else {
  // What the bin answered before the SDK was loaded (server/start.ts), if it did: the SDK goes on from there.
  const opening = takeOverHandshake();
  // The bin said it already when it answered the handshake itself.
  if (opening === undefined) process.stderr.write(serveHint(packageInfo.version));
  if (opening?.answered.length) log('debug', 'answered before the SDK loaded', { methods: opening.answered });
  const { approvals } = serveMcp(config, state, new StdioTapTransport(process.stdin, process.stdout, releaseYoungGeneration, opening), files);
  // A host ends a session by closing stdin (or with a signal); the store is drained and closed before the process ends.
  let exiting = false;
  const shutdown = () => {
    if (exiting) return;
    exiting = true;
    // Unref'd: it never keeps the process alive, only ends one whose close hangs (a stuck open or fsync). SIGKILL, not
    // process.exit: exit waits for libuv's worker threads, and one stuck in a blocking syscall never comes back.
    setTimeout(() => {
      log('error', `shutdown did not finish within ${SHUTDOWN_GRACE_MS} ms; killing this process`);
      process.kill(process.pid, 'SIGKILL');
    }, SHUTDOWN_GRACE_MS).unref();
    void approvals.close().finally(() => process.exit(0));
  };
  if (opening?.ended) shutdown();
  else process.stdin.once('end', shutdown);
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
