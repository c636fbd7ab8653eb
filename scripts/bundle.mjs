// Builds the MCP Bundle (.mcpb) that Claude Desktop and other MCPB hosts install by double-click, from the server
// esbuild already wrote to dist/server (`npm run bundle` builds it first).
//
//   node scripts/bundle.mjs [--out <file.mcpb>] [--server-json <server.json> | --no-server-json]
//
// Without --out it writes <name>.mcpb at the repository root and rewrites server.json's version fields and its mcpb
// fileSha256 to match: that file is the one a release uploads, so the registry entry must name its exact hash. With
// --out elsewhere server.json is left alone unless --server-json names one to update.
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { tsImport } from 'tsx/esm/api';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist', 'server');
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * The hosts' user_config, mapped onto the variables server/config.ts reads. Every option carries a default: the MCPB
 * reference host (getMcpConfigForManifest in @anthropic-ai/mcpb) leaves `${user_config.x}` in the env verbatim when
 * an optional option has neither a value nor a default, and the server would take that text for a port or a path.
 * An empty value is the server's own "use the default" (server/config.ts), which is what state_dir relies on: its
 * default is per platform and the host does not expand ${HOME} inside defaults. The bounds are server/config.ts's
 * rules; test/package/mcpb.test.ts holds them to parseConfig.
 */
function userConfig(defaults, logLevels) {
  return {
    hub_port: {
      env: 'ELICITLY_PORT',
      type: 'number',
      title: 'Hub port',
      description:
        'Loopback port of the approval hub. The Elicitly browser extension and every other agent that should share one inbox must use the same port.',
      default: defaults.port,
      min: 1,
      max: 65_535,
    },
    state_dir: {
      env: 'ELICITLY_STATE_DIR',
      type: 'directory',
      title: 'State directory',
      description:
        "Where durable requests, the install key and paired extensions are kept. Leave empty for your platform's per-user state directory; agents sharing one inbox must use the same directory.",
      default: '',
    },
    probe_timeout_ms: {
      env: 'ELICITLY_PROBE_TIMEOUT_MS',
      type: 'number',
      title: 'Doctor probe timeout (ms)',
      description: "How long elicit_doctor's probe waits for an answer to its test dialog, in milliseconds.",
      default: defaults.probeTimeoutMs,
      min: 1,
      max: 3_600_000,
    },
    log_level: {
      env: 'ELICITLY_LOG_LEVEL',
      type: 'string',
      title: 'Log level',
      description: `Which diagnostics the server writes to the host's log: ${logLevels.slice(0, -1).join(', ')} or ${logLevels.at(-1)}.`,
      default: defaults.logLevel,
    },
  };
}

/** Thrown for a refusal the person running the script can act on: printed without a stack. */
class BundleError extends Error {}

function fail(message) {
  throw new BundleError(message);
}

function options() {
  try {
    const { values } = parseArgs({
      options: { out: { type: 'string' }, 'server-json': { type: 'string' }, 'no-server-json': { type: 'boolean' } },
      strict: true,
    });
    return values;
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}\nusage: node scripts/bundle.mjs [--out <file.mcpb>] [--server-json <server.json> | --no-server-json]`);
  }
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** `git+https://github.com/o/r.git` → `https://github.com/o/r`: the form a browser, the manifest and the registry take. */
function repositoryUrl(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  if (typeof url !== 'string') fail('package.json has no repository url');
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** package.json's `author` ("Name <email> (url)"), as the manifest's required author object. */
function author(pkg) {
  const match = typeof pkg.author === 'string' ? /^([^<(]+?)\s*(?:<([^>]+)>)?\s*(?:\(([^)]+)\))?$/.exec(pkg.author) : null;
  if (!match) fail('package.json needs an "author" ("Name <email> (url)"): the bundle manifest requires one');
  return { name: match[1], ...(match[2] ? { email: match[2] } : {}), ...(match[3] ? { url: match[3] } : {}) };
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

/** The server exactly as a host will run it: the staged copy, next to the staged package.json it reads its version from. */
async function listTools(entry, version) {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-bundle-state-'));
  const env = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('ELICITLY_')) env[key] = value;
  // Listing binds and writes nothing today; a state dir of its own keeps it so should that change.
  Object.assign(env, { ELICITLY_STATE_DIR: stateDir, ELICITLY_LOG_LEVEL: 'warn' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [entry], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk.toString()));
  const client = new Client({ name: 'elicitly-bundle', version }, { capabilities: {}, versionNegotiation: { mode: 'legacy' } });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    return { tools, serverVersion: client.getServerVersion()?.version };
  } catch (error) {
    fail(`tools/list on the staged server failed: ${error instanceof Error ? error.message : String(error)}\n${stderr}`);
  } finally {
    await client.close().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/**
 * `mcpb pack` stamps every entry with the time of packing; one fixed time (SOURCE_DATE_EPOCH when set, else the DOS
 * epoch) makes the archive a function of its contents, so a release can be rebuilt and compared to what was uploaded.
 */
function fixEntryTimes(zip) {
  const epoch = process.env.SOURCE_DATE_EPOCH ? new Date(Number(process.env.SOURCE_DATE_EPOCH) * 1000) : new Date(Date.UTC(1980, 0, 1));
  if (Number.isNaN(epoch.getTime()) || epoch.getUTCFullYear() < 1980) fail(`SOURCE_DATE_EPOCH=${process.env.SOURCE_DATE_EPOCH}: not a time a ZIP can hold`);
  const time = (epoch.getUTCHours() << 11) | (epoch.getUTCMinutes() << 5) | (epoch.getUTCSeconds() >> 1);
  const date = ((epoch.getUTCFullYear() - 1980) << 9) | ((epoch.getUTCMonth() + 1) << 5) | epoch.getUTCDate();
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) fail('the packed bundle has no ZIP end record');
  const count = zip.readUInt16LE(end + 10);
  let entry = zip.readUInt32LE(end + 16);
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(entry) !== 0x02014b50) fail('unexpected ZIP central directory layout');
    const local = zip.readUInt32LE(entry + 42);
    if (zip.readUInt32LE(local) !== 0x04034b50) fail('unexpected ZIP local header layout');
    zip.writeUInt16LE(time, entry + 12);
    zip.writeUInt16LE(date, entry + 14);
    zip.writeUInt16LE(time, local + 10);
    zip.writeUInt16LE(date, local + 12);
    entry += 46 + zip.readUInt16LE(entry + 28) + zip.readUInt16LE(entry + 30) + zip.readUInt16LE(entry + 32);
  }
  return zip;
}

function mcpbCli() {
  const dir = join(ROOT, 'node_modules', '@anthropic-ai', 'mcpb');
  const { bin } = readJson(join(dir, 'package.json'));
  return join(dir, typeof bin === 'string' ? bin : bin.mcpb);
}

function updateServerJson(path, { version, url, sha256 }) {
  const doc = readJson(path);
  const mcpb = (doc.packages ?? []).filter((p) => p.registryType === 'mcpb');
  if (mcpb.length !== 1) fail(`${path}: expected one package with registryType "mcpb", found ${mcpb.length}`);
  doc.version = version;
  for (const p of doc.packages) if (p.registryType === 'npm') p.version = version;
  Object.assign(mcpb[0], { identifier: url, version, fileSha256: sha256 });
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(readJson(join(ROOT, 'schemas', 'server.schema.json')));
  if (!validate(doc)) fail(`${path} would not match the registry schema:\n${ajv.errorsText(validate.errors, { separator: '\n' })}`);
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`);
}

async function main() {
  const args = options();
  const pkg = readJson(join(ROOT, 'package.json'));
  const out = resolve(args.out ?? join(ROOT, `${pkg.name}.mcpb`));
  const serverJson = args['no-server-json'] ? null : args['server-json'] ? resolve(args['server-json']) : args.out ? null : join(ROOT, 'server.json');
  if (!existsSync(join(DIST, 'main.js'))) fail(`${relative(process.cwd(), join(DIST, 'main.js'))} is missing: run "npm run build:server" first ("npm run bundle" does)`);

  const repoUrl = repositoryUrl(pkg);
  const { parseConfig } = await tsImport('../server/config.ts', import.meta.url);
  const { LogLevelSchema } = await tsImport('../server/log.ts', import.meta.url);
  const parsed = parseConfig([], {});
  if (!parsed.ok) fail(`server/config.ts refuses an empty environment: ${parsed.issues.join('; ')}`);
  const settings = userConfig(parsed.config, LogLevelSchema.options);

  const staging = mkdtempSync(join(tmpdir(), 'elicitly-mcpb-'));
  try {
    cpSync(DIST, join(staging, 'server'), { recursive: true });
    // main.js is an ES module and Node 20 only reads .js as one under "type": "module"; package-info.ts walks up to
    // this file for the version the server reports.
    writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module' }, null, 2)}\n`);
    cpSync(join(ROOT, 'LICENSE'), join(staging, 'LICENSE'));
    cpSync(join(ROOT, 'public', 'icon', '128.png'), join(staging, 'icon.png'));

    const { tools, serverVersion } = await listTools(join(staging, 'server', 'main.js'), pkg.version);
    if (serverVersion !== pkg.version) fail(`the staged server reports version ${serverVersion}, package.json says ${pkg.version}`);
    if (tools.length === 0 || tools.some((tool) => !tool.description)) fail('the server listed no tools, or a tool without a description');

    const manifest = {
      manifest_version: '0.3',
      name: pkg.name,
      display_name: 'Elicitly companion',
      version: pkg.version,
      description: pkg.description,
      author: author(pkg),
      repository: { type: 'git', url: repoUrl },
      homepage: pkg.homepage ?? repoUrl,
      support: `${repoUrl}/issues`,
      icon: 'icon.png',
      server: {
        type: 'node',
        entry_point: 'server/main.js',
        mcp_config: {
          command: 'node',
          args: ['${__dirname}/server/main.js'],
          env: Object.fromEntries(Object.entries(settings).map(([key, { env }]) => [env, `\${user_config.${key}}`])),
        },
      },
      tools: tools.map(({ name, description }) => ({ name, description })),
      keywords: pkg.keywords,
      license: pkg.license,
      compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: pkg.engines.node } },
      user_config: Object.fromEntries(Object.entries(settings).map(([key, { env: _env, ...option }]) => [key, option])),
    };
    writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // The archive keeps each file's mode; fix them so the umask of the machine that packs does not show in the bytes.
    for (const file of filesUnder(staging)) chmodSync(file, 0o644);

    const pack = spawnSync(process.execPath, [mcpbCli(), 'pack', staging, out], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 120_000 });
    process.stderr.write(pack.stdout ?? '');
    process.stderr.write(pack.stderr ?? '');
    if (pack.status !== 0) fail(`mcpb pack failed (${pack.error?.message ?? `exit ${pack.status}`})`);
    const zip = fixEntryTimes(readFileSync(out));
    writeFileSync(out, zip);
    const sha256 = createHash('sha256').update(zip).digest('hex');

    if (serverJson) {
      const url = `${repoUrl}/releases/download/v${pkg.version}/${pkg.name}.mcpb`;
      updateServerJson(serverJson, { version: pkg.version, url, sha256 });
      process.stderr.write(`bundle: ${relative(process.cwd(), serverJson) || serverJson}: version ${pkg.version}, mcpb fileSha256 ${sha256}\n`);
    }
    const size = statSync(out).size;
    process.stdout.write(`${out} ${size} bytes (${(size / 1024).toFixed(1)} KiB) sha256 ${sha256}\n`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bundle: ${error instanceof BundleError ? error.message : (error?.stack ?? String(error))}\n`);
  process.exitCode = 1;
}
