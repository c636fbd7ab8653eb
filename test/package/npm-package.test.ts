// The published package, proven the way people get it: `npm pack`, installed from the tarball into an empty folder
// with the network forbidden (`--offline`: everything it needs is inside it, so `npx` downloads one package), then the
// installed bin driven by a real MCP client, and its --version, --help and status.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/run-command.js';
import { freePort } from '../helpers/scripted-extension.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// The bin's shebang runs `node` from PATH, as it does for a person: the node running the tests comes first.
const PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);

const run = (command: string, args: string[], options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}) =>
  runCommand(command, args, { ...options, env: { PATH, ...options.env } });

interface PackedFile { path: string; size: number }
interface Packed { filename: string; size: number; unpackedSize: number; files: PackedFile[] }

describe('the npm package', () => {
  const work = mkdtempSync(join(tmpdir(), 'elicitly-pack-'));
  const app = join(work, 'app');
  const stateDir = join(work, 'state');
  let packed: Packed;
  let bin: string;

  beforeAll(async () => {
    // `npm test` has just built dist/server; --ignore-scripts packs exactly that build.
    const pack = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT });
    expect(pack.code, pack.stderr).toBe(0);
    packed = (JSON.parse(pack.stdout) as Packed[])[0]!;
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty-app', version: '1.0.0', private: true }));
    const install = await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', join(work, packed.filename)], { cwd: app, timeout: 120_000 });
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0);
    bin = join(app, 'node_modules', '.bin', 'elicitly-companion');
  }, 180_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('holds only what runs: the bin, the bundled server, its review app and phone page (with its service worker), README, LICENSE, CHANGELOG and package.json', () => {
    const paths = packed.files.map((f) => f.path).sort();
    const extra = paths.filter((p) => !/^(dist\/server\/main\.js(\.LEGAL\.txt)?|dist\/server\/server\.js|dist\/server\/review-app\.html|dist\/server\/phone\/(phone\.html|worker\.js|icon-(192|512)\.png)|dist\/server\/chunks\/[\w-]+\.js|dist\/server\/handshake\/(index|\d+)\.json|README\.md|LICENSE|CHANGELOG\.md|package\.json)$/.test(p));
    expect(extra).toEqual([]);
    for (const required of ['dist/server/main.js', 'dist/server/handshake/index.json', 'dist/server/review-app.html', 'dist/server/phone/phone.html', 'dist/server/phone/worker.js', 'dist/server/phone/icon-192.png', 'dist/server/phone/icon-512.png', 'README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']) expect(paths).toContain(required);
    expect(PKG.bin['elicitly-companion']).toBe('dist/server/main.js');
  });

  it('declares no runtime dependency: everything is bundled, so installing it downloads nothing else', () => {
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'elicitly-companion', 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies']) expect(installed[field], field).toBeUndefined();
    expect(readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual(['elicitly-companion']);
  });

  it('the installed bin answers --version and --help', async () => {
    const version = await run(bin, ['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${PKG.version}\n` });
    const help = await run(bin, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`elicitly-companion ${PKG.version}: MCP tools that let AI agents ask a person.`);
    expect(help.stdout).toContain('elicitly-companion status [--json]');
  });

  it('a real MCP client: initialize, tools/list, an ask that reaches the hub and its store, then status sees it', async () => {
    const port = freePort();
    const env = { PATH, ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'warn' };
    const client = new Client({ name: 'package-test', version: '1' }, { capabilities: {} });
    await client.connect(new StdioClientTransport({ command: bin, env, stderr: 'pipe' }));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'elicitly', version: PKG.version });
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(['elicit_approval', 'elicit_await', 'elicit_cancel', 'elicit_confirm', 'elicit_doctor', 'elicit_form', 'elicit_proposal', 'elicit_result', 'elicit_selection', 'elicit_status']);
      // No dialog on this client and no extension connected: the ask, sent to the extension, is filed with the hub (the
      // lazily loaded chunks, the journal) and the answer says at once that nobody can see it yet.
      const asked = await client.callTool({ name: 'elicit_confirm', arguments: { question: 'Ship it?', via: 'extension' } });
      expect(asked.isError).toBeFalsy();
      expect(asked.structuredContent).toMatchObject({ confirmed: null, action: 'pending', via: 'extension', reviewer: { connected: false } });
      const status = await run(bin, ['status', '--json'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ state: 'running', port, hub: { extensionsConnected: 0, pending: 1 } });
    } finally {
      await client.close();
    }
  });
});

describe('npm pack --json, with its prepare build', () => {
  // A copy of what the build reads, so that rebuilding dist/ cannot pull the bundle from under tests running beside it.
  const copy = mkdtempSync(join(tmpdir(), 'elicitly-pack-json-'));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('prints only its JSON on stdout: the build logs to stderr', async () => {
    for (const entry of ['package.json', 'tsconfig.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'scripts', 'app', 'phone', 'kit', 'shared', 'server']) {
      cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const pack = await run(NPM, ['pack', '--json', '--dry-run'], { cwd: copy, timeout: 120_000 });
    expect(pack.code, pack.stderr).toBe(0);
    const packed = JSON.parse(pack.stdout) as Packed[];
    expect(packed.map((p) => p.files.some((f) => f.path === 'dist/server/main.js'))).toEqual([true]);
    // The build did run, and said so where a person still sees it.
    expect(pack.stderr).toContain('dist/app/review.html');
  }, 150_000);
});
