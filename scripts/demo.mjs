#!/usr/bin/env node
// `npm run demo`: the whole product on one screen. A hub with its own state dir, Chromium with the built extension
// paired to it, and a scripted agent (a real MCP client) that files three requests and prints each decision as the
// person makes it. `--headless --auto` lets the script decide through the real UI and save screenshots. Usage: --help.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgent } from './demo/agent.mjs';
import { decideAutomatically } from './demo/auto-review.mjs';
import { findBrowser, launchWithExtension, openPairedInbox, pairingCode } from './lib/extension-browser.mjs';
import { ensureBuilt } from './demo/build.mjs';
import { USAGE, UsageError, displayAvailable, parseOptions } from './demo/options.mjs';
import { HOW_TO_DECIDE, REQUESTS } from './demo/requests.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'dist/server/main.js');
const EXTENSION_DIR = join(ROOT, '.output/chrome-mv3');
/** The port a real hub listens on by default: the demo's own hub stays off it, so a running one is never disturbed. */
const REAL_HUB_PORT = 17391;

// ─── Output ─────────────────────────────────────────────────────────────────────────────────────────────────────────
// People read stdout. With --json, stdout carries only JSON lines (one per request filed, one per decision, one at
// the end) for scripts and tests, and the words go to stderr.

let jsonOutput = false;
const say = (text = '') => (jsonOutput ? process.stderr : process.stdout).write(`${text}\n`);
const emit = (line) => {
  if (jsonOutput) process.stdout.write(`${JSON.stringify(line)}\n`);
};
const shortPath = (path) => (relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path) || '.');
const firstLine = (error) => (error instanceof Error ? error.message : String(error)).split('\n')[0];

/** Why the run stopped before all three were decided, and with which exit code. */
class Stop extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

// ─── Command line and preflight ─────────────────────────────────────────────────────────────────────────────────────

let options;
try {
  options = parseOptions(process.argv.slice(2), ROOT);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`demo: ${error.message}\nRun "npm run demo -- --help" for the options.\n`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
jsonOutput = options.json;

if (!options.headless && !displayAvailable()) {
  say('demo: no display to show a browser window on (neither DISPLAY nor WAYLAND_DISPLAY is set).');
  say('Run it headless, with the script deciding instead of you:  npm run demo -- --headless --auto');
  process.exit(1);
}

const found = findBrowser({ chrome: options.chrome });
if (found.error) {
  say(found.error);
  emit({ type: 'error', step: 'find a browser', message: found.error });
  process.exit(1);
}

try {
  ensureBuilt(ROOT, { build: options.build, log: say });
} catch (error) {
  say(`demo: ${firstLine(error)}`);
  emit({ type: 'error', step: 'build', message: firstLine(error) });
  process.exit(1);
}

process.exitCode = await run({ ...options, browserPath: found.path });
// Everything is closed by now; should a handle linger anyway, it must not keep the demo from ending.
setTimeout(() => process.exit(), 3_000).unref();

// ─── The run ────────────────────────────────────────────────────────────────────────────────────────────────────────

async function run(opts) {
  const started = Date.now();
  const stop = new AbortController();
  const stopped = new Promise((_, reject) => stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true }));
  stopped.catch(() => undefined);
  const onSigint = () => stop.abort(new Stop('interrupted (Ctrl+C)', 130));
  process.on('SIGINT', onSigint);
  const timer = opts.auto ? setTimeout(() => stop.abort(new Stop(`timed out after ${opts.timeoutSeconds} s`, 1)), opts.timeoutSeconds * 1000) : undefined;

  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'elicitly-demo-state-'));
  const port = opts.port ?? (await freePort());
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  let agent;
  let browser;
  let page;
  let current = 'start';
  const step = (what) => (current = what);
  const at = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const filed = [];
  const decided = new Set();
  let screenshots = [];

  say('Elicitly demo');
  say(`  hub      127.0.0.1:${port}, state dir ${stateDir} (${opts.stateDir ? 'kept' : 'temporary'})`);
  say(`  browser  ${opts.browserPath}${opts.headless ? ' (headless)' : ''}`);
  say(`  decides  ${opts.auto ? `this script, through the review page (screenshots in ${shortPath(opts.outDir)})` : 'you, in the browser window'}`);
  say();

  const work = async () => {
    step('start the hub');
    agent = await startAgent({ serverEntry: SERVER, env });
    await agent.becomeHub();
    say(`✓ hub running: the demo agent's MCP server holds port ${port} [${at()}]`);

    step('start the browser with the extension');
    browser = await launchWithExtension({ executablePath: opts.browserPath, extensionDir: EXTENSION_DIR, headless: opts.headless, log: say, viewport: { width: 800, height: 600 } });
    browser.context.on('close', () => stop.abort(new Stop('the browser was closed', 1)));
    say(`✓ browser running with the extension (id ${browser.extensionId}) [${at()}]`);

    step('pair the extension with the hub');
    page = await openPairedInbox(browser, { port, code: () => pairingCode(SERVER, env) });
    say(`✓ extension paired with the hub (Settings → Hub port, then Pairing code → Pair) [${at()}]`);

    step('file the three requests');
    for (const request of REQUESTS) {
      const one = await agent.file(request);
      filed.push(one);
      emit({ type: 'request', key: one.key, tool: one.tool, elicitationId: one.elicitationId, message: one.message });
    }
    say(`✓ the agent filed three requests: [${at()}]`);
    filed.forEach((one, i) => say(`    ${i + 1}. ${one.label}: "${one.message}" (${one.tool}, ${one.elicitationId})`));
    say();
    if (!opts.auto) {
      say('Over to you: the browser shows the extension\'s inbox. Open each request and decide it:');
      filed.forEach((one, i) => say(`    ${i + 1}. ${one.label}: ${HOW_TO_DECIDE[one.key]}.`));
      say('Each decision is printed here as the agent receives it. Ctrl+C (or closing the browser) ends the demo early.');
      say();
    }

    step('wait for the decisions');
    const decisions = filed.map(async (one) => {
      // A person may take up to the request's own deadline (an hour); the script gets the run's bound.
      const deadline = opts.auto ? started + opts.timeoutSeconds * 1000 : one.expiresAt + 30_000;
      const result = await agent.decision(one, { deadline, signal: stop.signal });
      decided.add(one.key);
      report(one, result, decided.size);
    });
    const allDecided = Promise.all(decisions);
    allDecided.catch(() => undefined);
    const deciding = opts.auto ? decideAutomatically(page, filed, { outDir: opts.outDir, step }).then((shots) => (screenshots = shots)) : undefined;
    await Promise.all([allDecided, deciding]);
  };

  let exitCode = 0;
  try {
    await Promise.race([work(), stopped]);
    const seconds = (Date.now() - started) / 1000;
    say();
    say(`All three requests decided in ${seconds.toFixed(1)} s. Closing the browser and the hub.`);
    if (screenshots.length) {
      say('Screenshots:');
      for (const path of screenshots) say(`    ${shortPath(path)}`);
    }
    emit({ type: 'done', decided: decided.size, seconds: Number(seconds.toFixed(1)), screenshots, stateDir: opts.stateDir ?? null });
  } catch (error) {
    const reason = stop.signal.aborted ? stop.signal.reason : error;
    exitCode = reason instanceof Stop ? reason.exitCode : 1;
    say();
    if (reason instanceof Stop) {
      const withdrawn = filed.length - decided.size;
      say(`demo stopped: ${reason.message} (at the step: ${current}); ${decided.size} of 3 requests decided${withdrawn ? `, ${withdrawn} withdrawn` : ''}.`);
    } else {
      say(`demo failed while it was trying to ${current}: ${details(reason)}`);
    }
    if (current === 'start the hub' && opts.port) say(`For the demo: pick another --port, or leave --port out and it takes a free one.`);
    emit({ type: 'error', step: current, message: firstLine(reason), decided: decided.size });
    if (exitCode === 1 && opts.auto && page) {
      const path = join(opts.outDir, 'failure.png');
      if (await page.screenshot({ path, timeout: 5_000 }).then(() => true, () => false)) say(`The page at that moment: ${shortPath(path)}`);
    }
    // The server's warnings and errors may say why; its start-up banner would not.
    const serverLog = (agent?.stderr() ?? '').split('\n').filter((line) => line.trim() && !/^elicitly-companion \d/.test(line));
    if (exitCode === 1 && serverLog.length) say(`The server's last lines on stderr:\n${serverLog.slice(-20).map((line) => `    ${line}`).join('\n')}`);
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSigint);
    // Ends the agent's waits still in flight (after a failure) before the server they wait on goes.
    if (!stop.signal.aborted) stop.abort(new Stop('finished', exitCode));
    // A request nobody decided is withdrawn, so a kept state dir does not offer it again next time.
    const undecided = filed.filter((one) => !decided.has(one.key));
    if (agent && undecided.length) await Promise.all(undecided.map((one) => agent.withdraw(one).catch(() => undefined)));
    await browser?.close();
    await agent?.close();
    if (!opts.stateDir) rmSync(stateDir, { recursive: true, force: true, maxRetries: 3 });
  }
  return exitCode;
}

/** An error's message without Playwright's launch command lines and call-log noise, at most a dozen lines. */
function details(error) {
  const lines = (error instanceof Error ? error.message : String(error)).split('\n');
  const end = lines.findIndex((line) => /^\s*(Browser logs|Call log):/.test(line));
  return lines.slice(0, end === -1 ? 12 : Math.min(end, 12)).filter((line) => line.trim()).join('\n    ');
}

/** One decision, as the agent received it: the elicit_result envelope, labelled. */
function report(one, { status, envelope, isError }, count) {
  say(`── Decision ${count} of 3: ${one.label} → ${status} (${one.tool}, ${one.elicitationId}) ──`);
  say(JSON.stringify(envelope, null, 2));
  say();
  emit({ type: 'decision', key: one.key, label: one.label, tool: one.tool, elicitationId: one.elicitationId, status, isError, envelope });
}

/** A port nothing listens on now, asked of the system (not guessed), and never the real hub's. */
async function freePort() {
  const ask = () => new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  const port = await ask();
  // Systems hand out ports far above 17391; should one ever give it, the next ask gets another.
  return port === REAL_HUB_PORT ? ask() : port;
}
