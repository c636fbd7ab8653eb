// What the bin (server/start.ts) decides before anything else is loaded: whether the first answers may come from the
// recorded handshake. Plain code, no zod: it runs before the configuration's schemas are loaded (main.ts parses them).

/**
 * Whether the fast start applies, and what it must know of the configuration: it applies to the MCP server as a host
 * starts it (no command and no argument but `--port`) unless turned off (ELICITLY_FAST_HANDSHAKE=0). A command, or
 * anything config.ts would refuse, goes the usual way. The chat's review may be offered unless this process is a relay
 * (ELICITLY_HUB_URL or ELICITLY_HUB_KEY set), as config.ts rules.
 */
export function fastStart(argv: readonly string[], env: NodeJS.ProcessEnv): { appSurface: boolean } | undefined {
  const portOnly = argv.length === 0 || (argv.length === 1 && /^--port=\d+$/.test(argv[0] ?? '')) || (argv.length === 2 && argv[0] === '--port' && /^\d+$/.test(argv[1] ?? ''));
  if (!portOnly || env.ELICITLY_FAST_HANDSHAKE?.trim() === '0') return undefined;
  const set = (value: string | undefined) => value !== undefined && value.trim() !== '';
  return { appSurface: !set(env.ELICITLY_HUB_URL) && !set(env.ELICITLY_HUB_KEY) };
}

/** The one line for a person who started the MCP server by hand: stdout is the protocol, so it goes to stderr. */
export function serveHint(version: string): string {
  return (
    `elicitly-companion ${version}: an MCP server on stdio that lets AI agents ask a person. ` +
    'Register it with your host, e.g. `claude mcp add elicitly -- npx -y elicitly-companion` (see README).\n'
  );
}
