// The MCP Bundle as a host gets it: built by scripts/bundle.mjs, checked and unpacked with the mcpb CLI, its env
// resolved by the MCPB reference host code (@anthropic-ai/mcpb's getMcpConfigForManifest, what Claude Desktop runs),
// and the unpacked server driven over stdio by a real MCP client.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpbManifestAny } from '@anthropic-ai/mcpb/browser';
import { getMcpConfigForManifest, vAny } from '@anthropic-ai/mcpb/browser';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/config.js';
import { LogLevelSchema } from '../../server/log.js';
import { freePort } from '../helpers/scripted-extension.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE_SCRIPT = join(ROOT, 'scripts', 'bundle.mjs');
const MCPB_DIR = join(ROOT, 'node_modules', '@anthropic-ai', 'mcpb');
const MCPB_CLI = join(MCPB_DIR, z.object({ bin: z.string() }).parse(JSON.parse(readFileSync(join(MCPB_DIR, 'package.json'), 'utf8'))).bin);
const DIST = join(ROOT, 'dist', 'server');

const PackageSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  license: z.string(),
  keywords: z.array(z.string()),
  engines: z.object({ node: z.string() }),
});
const pkg = PackageSchema.parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));

type UserConfigValues = Record<string, string | number>;

function run(args: string[], timeout = 120_000) {
  return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout, input: '' });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The variables server/config.ts reads, from its source: what a host can set. */
const configVariables = new Set(readFileSync(join(ROOT, 'server', 'config.ts'), 'utf8').match(/ELICITLY_[A-Z_]+/g));

/** The environment a host hands the server, minus this machine's own ELICITLY_* settings. */
function hostEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('ELICITLY_')) base[key] = value;
  return { ...base, ...env };
}

let work: string;
let out: string;
let unpacked: string;
let manifest: McpbManifestAny;
let packStdout: string;

/** What the host runs for these user_config values, resolved as the reference host resolves it. */
async function resolveConfig(values: UserConfigValues) {
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: unpacked,
    systemDirs: { HOME: work, DESKTOP: work, DOCUMENTS: work, DOWNLOADS: work },
    userConfig: values,
    pathSeparator: sep,
  });
  if (!config) throw new Error('the host would not run this bundle with these values');
  expect(config.command).toBe('node');
  return { args: config.args ?? [], env: config.env ?? {} };
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'elicitly-mcpb-test-'));
  out = join(work, 'elicitly-companion.mcpb');
  unpacked = join(work, 'unpacked');
  const bundle = run([BUNDLE_SCRIPT, '--out', out]);
  if (bundle.status !== 0) throw new Error(`bundle.mjs exited ${bundle.status}:\n${bundle.stderr}`);
  packStdout = bundle.stdout;
  const unpack = run([MCPB_CLI, 'unpack', out, unpacked], 30_000);
  if (unpack.status !== 0) throw new Error(`mcpb unpack exited ${unpack.status}:\n${unpack.stdout}${unpack.stderr}`);
  manifest = vAny.McpbManifestSchema.parse(JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8')));
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the MCP Bundle (npm run bundle)', () => {
  it('says where it wrote the bundle and how big it is', () => {
    expect(packStdout).toContain(out);
    expect(packStdout).toContain(`${statSync(out).size} bytes`);
    expect(packStdout).toContain(sha256(out));
  });

  it('passes mcpb validate', () => {
    const validate = run([MCPB_CLI, 'validate', join(unpacked, 'manifest.json')], 30_000);
    expect(validate.stdout + validate.stderr).toContain('Manifest schema validation passes');
    expect(validate.status).toBe(0);
  });

  it('holds the built server, a package.json that makes it an ES module, the license and the icon, and nothing else', () => {
    const server = filesUnder(DIST);
    expect(server).toEqual(expect.arrayContaining(['main.js', 'main.js.LEGAL.txt']));
    expect(server.some((file) => file.startsWith('chunks/'))).toBe(true);
    expect(filesUnder(unpacked)).toEqual(['LICENSE', 'icon.png', 'manifest.json', 'package.json', ...server.map((file) => `server/${file}`)].sort());
    for (const file of server) expect(sha256(join(unpacked, 'server', file)), file).toBe(sha256(join(DIST, file)));
    expect(JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'))).toEqual({ name: pkg.name, version: pkg.version, type: 'module' });
    expect(sha256(join(unpacked, 'LICENSE'))).toBe(sha256(join(ROOT, 'LICENSE')));
    expect(sha256(join(unpacked, 'icon.png'))).toBe(sha256(join(ROOT, 'public', 'icon', '128.png')));
  });

  it('describes the package as package.json does and starts server/main.js with node', () => {
    expect(manifest).toMatchObject({
      name: pkg.name,
      version: pkg.version,
      description: pkg.description,
      license: pkg.license,
      keywords: pkg.keywords,
      icon: 'icon.png',
      repository: { type: 'git', url: 'https://github.com/elicitly/elicitly-companion' },
      compatibility: { runtimes: { node: pkg.engines.node } },
      server: { type: 'node', entry_point: 'server/main.js', mcp_config: { command: 'node', args: ['${__dirname}/server/main.js'] } },
    });
    expect(manifest.author.name).not.toBe('');
  });

  it('maps every user_config option onto a variable server/config.ts reads, and every such mapping onto an option', () => {
    const env = manifest.server.mcp_config?.env ?? {};
    expect(Object.keys(env).sort()).toEqual(['ELICITLY_LOG_LEVEL', 'ELICITLY_PORT', 'ELICITLY_PROBE_TIMEOUT_MS', 'ELICITLY_STATE_DIR']);
    for (const name of Object.keys(env)) expect(configVariables, name).toContain(name);
    const referenced = Object.values(env).map((value) => /^\$\{user_config\.(\w+)\}$/.exec(value)?.[1]);
    expect(referenced.sort()).toEqual(Object.keys(manifest.user_config ?? {}).sort());
  });

  it("gives every option a default, so an untouched install runs the server's own defaults with no placeholder left", async () => {
    // The reference host leaves `${user_config.x}` in the env verbatim for an optional option with no value and no
    // default; the server would read that text as a port or a directory.
    for (const [key, option] of Object.entries(manifest.user_config ?? {})) {
      expect(option.default, key).toBeDefined();
      expect(option.required ?? false, key).toBe(false);
    }
    const { env } = await resolveConfig({});
    for (const value of Object.values(env)) expect(value).not.toContain('${');
    // An empty ELICITLY_STATE_DIR is the server's "use the platform default", the one default a manifest cannot spell.
    expect(env.ELICITLY_STATE_DIR).toBe('');
    expect(parseConfig([], env)).toEqual(parseConfig([], {}));
  });

  it("bounds the number options by the server's own rules and names every log level", () => {
    const env = manifest.server.mcp_config?.env ?? {};
    const variableOf = (key: string) => Object.keys(env).find((name) => env[name] === `\${user_config.${key}}`) ?? key;
    const numbers = Object.entries(manifest.user_config ?? {}).filter(([, option]) => option.type === 'number');
    expect(numbers.map(([key]) => key).sort()).toEqual(['hub_port', 'probe_timeout_ms']);
    for (const [key, { min, max }] of numbers) {
      const variable = variableOf(key);
      if (min === undefined || max === undefined) throw new Error(`${key} has no bounds`);
      for (const ok of [min, max]) expect(parseConfig([], { [variable]: String(ok) }).ok, `${variable}=${ok}`).toBe(true);
      for (const bad of [min - 1, max + 1]) {
        const parsed = parseConfig([], { [variable]: String(bad) });
        expect(parsed.ok, `${variable}=${bad}`).toBe(false);
        if (!parsed.ok) expect(parsed.issues.join('\n')).toContain(variable);
      }
    }
    const logLevel = manifest.user_config?.log_level;
    for (const level of LogLevelSchema.options) expect(logLevel?.description).toContain(level);
  });

  it('runs from the unpacked folder as a host runs it: its tools are the manifest tools, and a call answers', async () => {
    const stateDir = join(work, 'state');
    const { args, env } = await resolveConfig({ hub_port: freePort(), state_dir: stateDir });
    expect(args).toEqual([`${unpacked}/server/main.js`]);
    expect(env.ELICITLY_STATE_DIR).toBe(stateDir);
    let stderr = '';
    const transport = new StdioClientTransport({ command: process.execPath, args, env: hostEnv(env), stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'mcpb-host', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'legacy' } });
    try {
      await client.connect(transport, { timeout: 15_000 });
      // The version comes from the bundle's own package.json: proof the server found it from inside the bundle.
      expect(client.getServerVersion()?.version).toBe(pkg.version);
      const { tools } = await client.listTools(undefined, { timeout: 15_000 });
      expect(manifest.tools).toEqual(tools.map(({ name, description }) => ({ name, description })));
      const result = await client.callTool({ name: 'elicit_status', arguments: { elicitationId: 'el_unknown' } }, { timeout: 15_000 });
      expect(result.isError).toBe(true);
      const text = z.array(z.object({ type: z.literal('text'), text: z.string() })).parse(result.content)[0]?.text ?? '';
      expect(JSON.parse(text)).toMatchObject({ error: 'not_found' });
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nserver stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });

  it('passes a value the server refuses on as a refusal that names the variable', async () => {
    for (const [values, variable] of [
      [{ hub_port: 0 }, 'ELICITLY_PORT'],
      [{ log_level: 'verbose' }, 'ELICITLY_LOG_LEVEL'],
    ] as const) {
      const { args, env } = await resolveConfig({ ...values, state_dir: join(work, 'refused') });
      const server = spawnSync(process.execPath, args, { env: hostEnv(env), input: '', encoding: 'utf8', timeout: 10_000 });
      expect(server.status, server.stderr).toBe(2);
      expect(server.stdout).toBe('');
      expect(server.stderr).toContain(variable);
    }
  });

  it('is reproducible: building again from the same dist/server gives the same bytes', () => {
    const again = join(work, 'again.mcpb');
    const bundle = run([BUNDLE_SCRIPT, '--out', again]);
    expect(bundle.status, bundle.stderr).toBe(0);
    expect(sha256(again)).toBe(sha256(out));
  }, 120_000);
});
