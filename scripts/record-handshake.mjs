// Records the SDK's own answers to every handshake the bin answers before loading it (server/mcp/fast-handshake.ts),
// by running the bundle just built with that fast path off: each protocol version the SDK negotiates, in both eras,
// for a client that renders MCP Apps and one that does not. Written to dist/server/handshake/: index.json says which
// answer answers what, and each distinct answer is a file of its own (<n>.json), read only when it is sent.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/** The 2026-07-28 era's revisions: the SDK keeps its list internal, and a revision it did not serve fails the recording. */
const MODERN_VERSIONS = ['2026-07-28'];
const LISTS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'ping'];
/** Must be results, never errors: the handshake itself. */
const MUST_SUCCEED = new Set(['initialize', 'server/discover', 'tools/list']);
const CLIENT_INFO = { name: 'elicitly-build', version: '0' };
const SURFACES = {
  plain: {},
  apps: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
};
const TIMEOUT_MS = 20_000;
/** An id no answer could contain by chance, so that it splits the answer's text exactly where the id goes. */
const idOf = (n) => `elicitly-recorded-id-${n}-5f0c1e`;

/**
 * Sends `messages` to a fresh server, one at a time, and returns each request's answer by method, as the text before and
 * after its id (ids are unique strings here, so the SDK's answer for any id is the two joined around it).
 */
function converse(server, stateDir, messages) {
  const env = { ...process.env, ELICITLY_FAST_HANDSHAKE: '0', ELICITLY_STATE_DIR: stateDir, ELICITLY_LOG_LEVEL: 'error' };
  delete env.ELICITLY_HUB_URL;
  delete env.ELICITLY_HUB_KEY;
  const child = spawn(process.execPath, [server], { stdio: ['pipe', 'pipe', 'pipe'], env });
  // Kept for a failure's message only: a server that starts well says one line of hello there.
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  const answers = {};
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`record-handshake: no answer within ${TIMEOUT_MS} ms (${Object.keys(answers).length} of ${messages.length}); the server's stderr: ${stderr}`));
    }, TIMEOUT_MS);
    let next = 0;
    const sendNext = () => {
      while (next < messages.length) {
        const message = messages[next++];
        child.stdin.write(`${JSON.stringify(message)}\n`);
        if ('id' in message) return;
      }
      clearTimeout(timer);
      child.stdin.end();
      resolve(answers);
    };
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = messages.find((m) => m.id !== undefined && line.includes(JSON.stringify(m.id)));
      if (!message) return;
      const parts = line.split(JSON.stringify(message.id));
      if (parts.length !== 2 || JSON.parse(line).id !== message.id) reject(new Error(`record-handshake: the answer to ${message.method} names its id other than once: ${line.slice(0, 300)}`));
      if (MUST_SUCCEED.has(message.method) && !('result' in JSON.parse(line))) reject(new Error(`record-handshake: ${message.method} was refused: ${line.slice(0, 300)}`));
      answers[message.method] = parts;
      sendNext();
    });
    child.on('error', reject);
    sendNext();
  });
}

export async function recordHandshake(server, out) {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-handshake-'));
  try {
    const runs = [];
    for (const [surface, capabilities] of Object.entries(SURFACES)) {
      for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
        const lists = LISTS.map((method, i) => ({ jsonrpc: '2.0', id: idOf(i + 2), method }));
        const messages = [{ jsonrpc: '2.0', id: idOf(1), method: 'initialize', params: { protocolVersion: version, capabilities, clientInfo: CLIENT_INFO } }, { jsonrpc: '2.0', method: 'notifications/initialized' }, ...lists];
        runs.push(converse(server, stateDir, messages).then((answers) => ({ era: 'legacy', version, surface, answers })));
      }
      for (const version of MODERN_VERSIONS) {
        const _meta = { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientInfo': CLIENT_INFO, 'io.modelcontextprotocol/clientCapabilities': capabilities };
        const messages = ['server/discover', ...LISTS].map((method, i) => ({ jsonrpc: '2.0', id: idOf(i + 1), method, params: { _meta } }));
        runs.push(converse(server, stateDir, messages).then((answers) => ({ era: 'modern', version, surface, answers })));
      }
    }
    const distinct = [];
    const recorded = { format: 1, legacy: {}, modern: {}, count: 0 };
    for (const { era, version, surface, answers } of await Promise.all(runs)) {
      const byMethod = {};
      for (const [method, parts] of Object.entries(answers)) {
        let index = distinct.findIndex((known) => known[0] === parts[0] && known[1] === parts[1]);
        if (index === -1) index = distinct.push(parts) - 1;
        byMethod[method] = index;
      }
      recorded[era][version] ??= {};
      recorded[era][version][surface] = byMethod;
    }
    recorded.count = distinct.length;
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'index.json'), `${JSON.stringify(recorded)}\n`);
    distinct.forEach((answer, n) => writeFileSync(join(out, `${n}.json`), `${JSON.stringify(answer)}\n`));
    return recorded;
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
