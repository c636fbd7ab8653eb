import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createServer } from './create-server.js';
import { log } from './log.js';
import { packageInfo } from './package-info.js';
import { StdioTapTransport } from './stdio-tap-transport.js';

const transport = new StdioTapTransport();

// stdout is the protocol; the one-line hint for a person who started it by hand goes to stderr.
process.stderr.write(
  `elicitly-companion ${packageInfo.version}: an MCP server on stdio that lets AI agents ask a person. ` +
    'Register it with your host, e.g. `claude mcp add elicitly -- npx -y elicitly-companion` (see README).\n',
);

serveStdio((ctx) => createServer(ctx, { handshake: () => transport.initialize }), {
  transport,
  onerror: (error) => log('warn', 'mcp error', { error: error.message }),
});
