// The review inside the chat (MCP App): the size of the HTML the server serves as ui://elicitly/review.html (raw and
// gzip -9), and its first render of a 100-field proposal in the headless-Chromium test host of test/e2e/app-host/
// (the SDK's AppBridge; the view's calls go through the host to the built server over stdio): from the host handing
// the view the tool result to the grid having its 100 body rows in the DOM, each run in a fresh page. Measured numbers,
// printed; run with `node --import tsx bench/app.mjs` (the host's helpers are TypeScript).
import { Buffer } from 'node:buffer';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import {
  buildHostScript, callTool, connectAppClient, manyFieldProposal, measureFirstRender, openAppHost,
} from '../test/e2e/app-host/app-host.ts';
import { record } from './metrics.mjs';

const APP_HTML = fileURLToPath(new URL('../dist/server/review-app.html', import.meta.url));
const PHONE_HTML = fileURLToPath(new URL('../dist/server/phone/phone.html', import.meta.url));
const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';
const FIELDS = 100;
const RUNS = 5;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${x.toFixed(1)} ms`;

export async function app() {
  console.log('MCP App (review inside the chat):');
  if (!existsSync(APP_HTML)) {
    console.log(`  ${APP_HTML} is missing: run "npm run build:server" first`);
    return;
  }
  const html = readFileSync(APP_HTML, 'utf8');
  const raw = Buffer.byteLength(html);
  const gz = gzipSync(html, { level: 9 }).length;
  console.log(`  dist/server/review-app.html: ${raw.toLocaleString('en')} B raw, ${gz.toLocaleString('en')} B gzip -9 (${(raw / 1024).toFixed(1)} KB / ${(gz / 1024).toFixed(1)} KB)`);
  record('app_html_gzip_kb', 'MCP App HTML, gzip -9', gz / 1024, 'KB', 60);
  // The phone reviewer page the hub serves: the same components, so its size is read beside the app's.
  if (existsSync(PHONE_HTML)) {
    const phone = readFileSync(PHONE_HTML, 'utf8');
    const phoneGz = gzipSync(phone, { level: 9 }).length;
    console.log(`  dist/server/phone/phone.html (the phone page): ${Buffer.byteLength(phone).toLocaleString('en')} B raw, ${phoneGz.toLocaleString('en')} B gzip -9 (${(phoneGz / 1024).toFixed(1)} KB)`);
    record('phone_html_gzip_kb', 'phone page HTML, gzip -9', phoneGz / 1024, 'KB');
  }

  if (!existsSync(CHROMIUM)) {
    console.log(`  first render: not measured, no Chromium at ${CHROMIUM}`);
    return;
  }
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-bench-app-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  let agent;
  let browser;
  try {
    const script = await buildHostScript();
    agent = await connectAppClient({ ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
    const times = [];
    const viewCalls = [];
    for (let run = 0; run < RUNS; run++) {
      const input = manyFieldProposal(`App bench proposal ${run + 1} with ${FIELDS} fields`, FIELDS, 2);
      const result = await callTool(agent.client, 'elicit_proposal', input);
      if (result.isError) throw new Error(`elicit_proposal failed: ${JSON.stringify(result.content)}`);
      const host = await openAppHost(browser, agent.client, script);
      try {
        times.push(await measureFirstRender(host, 'elicit_proposal', input, result, FIELDS));
        const read = host.events.find((e) => e.type === 'tool-done' && e.name === 'elicit_app_view');
        if (read) viewCalls.push(read.ms);
        if (host.errors.length) console.log(`  note: run ${run + 1} logged errors: ${host.errors.join(' | ')}`);
      } finally {
        await host.close();
        await callTool(agent.client, 'elicit_cancel', { elicitationId: result.structuredContent?.elicitationId });
      }
    }
    console.log(`  first render of a ${FIELDS}-field proposal in the test host (tool result sent → ${FIELDS} grid body rows in the DOM, fresh page each run): median ${ms(median(times))} of ${times.length}, max ${ms(Math.max(...times))}`);
    console.log(`  runs: ${times.map((t) => t.toFixed(1)).join(', ')} ms`);
    record('app_first_render_ms', `MCP App first render, ${FIELDS} fields, median`, median(times), 'ms');
    if (viewCalls.length) console.log(`  of which the view's elicit_app_view call through the host to the server and back: median ${ms(median(viewCalls))} (runs: ${viewCalls.map((t) => t.toFixed(1)).join(', ')} ms)`);
  } catch (error) {
    console.log(`  first render: stopped early: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  } finally {
    await browser?.close().catch(() => {});
    await agent?.close().catch(() => {});
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await app();
