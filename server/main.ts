import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { DEFAULT_HUB_PORT } from '../shared/extension-id.js';
import { ApprovalBroker } from './approvals/approval-broker.js';
import { createServer } from './create-server.js';
import { runPairCommand } from './pair-command.js';
import { log } from './log.js';
import { packageInfo } from './package-info.js';
import { stateDir } from './state-dir.js';
import { StdioTapTransport } from './stdio-tap-transport.js';

function portFrom(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  const flag = argv.findIndex((a) => a === '--port' || a.startsWith('--port='));
  const raw = flag === -1 ? env.ELICITLY_PORT : argv[flag]?.includes('=') ? argv[flag]?.split('=')[1] : argv[flag + 1];
  const port = Number(raw);
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : DEFAULT_HUB_PORT;
}

function positiveNumber(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

const argv = process.argv.slice(2);
const dir = stateDir();

if (argv[0] === 'pair') {
  runPairCommand(dir);
} else {
  const approvals = new ApprovalBroker({
    port: portFrom(argv, process.env),
    dir,
    retentionDays: positiveNumber(process.env.ELICITLY_RETENTION_DAYS, 7),
  });
  const transport = new StdioTapTransport();
  // stdout is the protocol; the one-line hint for a person who started it by hand goes to stderr.
  process.stderr.write(
    `elicitly-companion ${packageInfo.version}: an MCP server on stdio that lets AI agents ask a person. ` +
      'Register it with your host, e.g. `claude mcp add elicitly -- npx -y elicitly-companion` (see README).\n',
  );
  serveStdio(
    (ctx) =>
      createServer(ctx, {
        handshake: () => transport.initialize,
        approvals,
        minTimeoutSeconds: positiveNumber(process.env.ELICITLY_MIN_TIMEOUT_SECONDS, 60),
      }),
    { transport, onerror: (error) => log('warn', 'mcp error', { error: error.message }) },
  );
  // A host ends a session by closing stdin; a hub's open sockets must not keep the process alive after that.
  process.stdin.once('end', () => {
    void approvals.close().finally(() => process.exit(0));
  });
}
