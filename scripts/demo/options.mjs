// The demo's command line: what it accepts, what it refuses before anything starts, and its usage text.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE = `Usage: npm run demo [-- options]
       node scripts/demo.mjs [options]

Starts an elicitly-companion hub, opens Chromium with the extension paired to it, and lets a scripted agent
(a real MCP client) file three requests: the NorthMark proposal of seed 004, a deploy approval (json mode with
a display template) and a release-note form. Each decision is printed as the agent receives it.

Options:
  --headless          run Chromium without a window (needs --auto: nobody could decide otherwise)
  --auto              decide through the real UI by script, as a person would, and save screenshots
  --out <dir>         where --auto saves its screenshots (default: demo-output/)
  --json              print one JSON line per decision (and a final summary) on stdout; the rest goes to stderr
  --state-dir <dir>   the hub's state dir, kept afterwards (default: a temporary one, removed at the end)
  --port <n>          the hub's port (default: a free one, never the real hub's 17391)
  --chrome <path>     use this browser and look nowhere else (default: CHROME_PATH, else the usual places)
  --timeout <s>       with --auto, the whole run's bound in seconds (default: 120)
  --no-build          do not rebuild stale outputs (missing ones are still an error)
  -h, --help          show this text

Examples:
  npm run demo                          decide yourself in a Chromium window
  npm run demo -- --headless --auto     no display needed: the script decides and saves screenshots`;

/** A refusal of the command line itself (exit code 2), told apart from a run that failed (exit code 1). */
export class UsageError extends Error {}

/** The parsed options, or a UsageError naming what is wrong. Paths given are relative to the working directory. */
export function parseOptions(argv, root) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        headless: { type: 'boolean', default: false },
        auto: { type: 'boolean', default: false },
        out: { type: 'string' },
        json: { type: 'boolean', default: false },
        'state-dir': { type: 'string' },
        port: { type: 'string' },
        chrome: { type: 'string' },
        timeout: { type: 'string' },
        'no-build': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.help) return { help: true };
  if (parsed.headless && !parsed.auto) {
    throw new UsageError('--headless needs --auto: without a window nobody can decide the requests. Run: npm run demo -- --headless --auto');
  }
  if (parsed.out !== undefined && !parsed.auto) throw new UsageError('--out is for --auto, which saves the screenshots.');
  if (parsed.timeout !== undefined && !parsed.auto) throw new UsageError('--timeout bounds an --auto run; a person takes the time they need.');
  const port = parsed.port === undefined ? undefined : wholeNumber('--port', parsed.port, 1024, 65535);
  const timeoutSeconds = parsed.timeout === undefined ? 120 : wholeNumber('--timeout', parsed.timeout, 10, 3600);
  return {
    help: false,
    headless: parsed.headless,
    auto: parsed.auto,
    json: parsed.json,
    outDir: parsed.out === undefined ? join(root, 'demo-output') : resolve(parsed.out),
    stateDir: parsed['state-dir'] === undefined ? undefined : resolve(parsed['state-dir']),
    port,
    chrome: parsed.chrome,
    timeoutSeconds,
    build: !parsed['no-build'],
  };
}

function wholeNumber(flag, text, min, max) {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}.`);
  return n;
}

/** Whether a browser window can be shown: Linux needs an X or Wayland display; macOS and Windows always have one. */
export function displayAvailable(platform = process.platform, env = process.env) {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}
