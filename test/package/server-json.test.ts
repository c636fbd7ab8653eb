// The MCP Registry entry (server.json): valid against the registry's published schema (vendored in schemas/), in step
// with package.json and with the variables the server reads, and its mcpb hash rewritten by the bundle script.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import * as z from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/config.js';
import { LogLevelSchema } from '../../server/log.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER_JSON = join(ROOT, 'server.json');
const SCHEMA_ID = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const SCHEMA_SOURCE = 'https://github.com/modelcontextprotocol/registry/blob/e361b5ff5a925b36a38eda0544bca8230a84558b/internal/validators/schemas/2025-12-11.json';

const pkg = z
  .object({ name: z.string(), version: z.string(), mcpName: z.string(), repository: z.object({ url: z.string() }) })
  .parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));
const repoUrl = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

// Only what the tests read; the schema itself judges the whole document.
const EnvVarSchema = z.looseObject({
  name: z.string(),
  description: z.string().min(1),
  format: z.enum(['string', 'number', 'boolean', 'filepath']),
  default: z.string().optional(),
  choices: z.array(z.string()).optional(),
  isRequired: z.literal(false),
});
const PackageEntrySchema = z.looseObject({
  registryType: z.string(),
  identifier: z.string(),
  version: z.string().optional(),
  fileSha256: z.string().optional(),
  transport: z.object({ type: z.string() }),
  environmentVariables: z.array(EnvVarSchema).optional(),
});
const ServerJsonSchema = z.looseObject({
  $schema: z.string(),
  name: z.string(),
  description: z.string(),
  version: z.string(),
  repository: z.object({ url: z.string(), source: z.string() }),
  packages: z.array(PackageEntrySchema),
});
type ServerJson = z.infer<typeof ServerJsonSchema>;

const schemaText = readFileSync(join(ROOT, 'schemas', 'server.schema.json'), 'utf8');
const schema = z.looseObject({ $id: z.string(), $comment: z.string() }).parse(JSON.parse(schemaText));
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validate = ajv.compile(schema);

const serverJsonText = readFileSync(SERVER_JSON, 'utf8');
const raw: unknown = JSON.parse(serverJsonText);
const doc = ServerJsonSchema.parse(raw);

function only(registryType: string) {
  const found = doc.packages.filter((p) => p.registryType === registryType);
  expect(found, registryType).toHaveLength(1);
  const [entry] = found;
  if (!entry) throw new Error(`no ${registryType} package`);
  return entry;
}

/** The refusals ajv gives, as "instancePath keyword" pairs. */
function refusals(candidate: unknown): string[] {
  return validate(candidate) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword}`);
}

const configSource = readFileSync(join(ROOT, 'server', 'config.ts'), 'utf8');
/** Every ELICITLY_* variable server/config.ts reads (it may not be imported for this: its SOURCES map is private). */
const configVariables = [...new Set(configSource.match(/ELICITLY_[A-Z_]+/g))].sort();
/** SOURCES in server/config.ts: which setting each variable feeds, e.g. port ← ELICITLY_PORT. */
const settingOf = new Map([...configSource.matchAll(/^\s*(\w+): '([^']*ELICITLY_[^']*)'/gm)].flatMap((m) => [...(m[2] ?? '').matchAll(/ELICITLY_[A-Z_]+/g)].map((v) => [v[0], m[1]] as const)));

const work = mkdtempSync(join(tmpdir(), 'elicitly-server-json-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('server.json, the MCP Registry entry', () => {
  it('is checked against the newest dated registry schema, vendored with its source', () => {
    expect(schema.$id).toBe(SCHEMA_ID);
    expect(doc.$schema).toBe(SCHEMA_ID);
    expect(schema.$comment).toContain(SCHEMA_SOURCE);
    expect(schema.$comment).toContain('retrieved 2026-11-30');
  });

  it('matches the schema', () => {
    expect(refusals(raw)).toEqual([]);
  });

  it('is refused when broken, so the validator is live', () => {
    const broken = (change: (copy: ServerJson) => void): unknown => {
      const copy = ServerJsonSchema.parse(JSON.parse(serverJsonText));
      change(copy);
      return copy;
    };
    expect(refusals(broken((c) => (c.description = 'x'.repeat(101))))).toContain('/description maxLength');
    expect(refusals(broken((c) => (c.name = 'elicitly-companion')))).toContain('/name pattern');
    expect(
      refusals(
        broken((c) => {
          const npm = c.packages.find((p) => p.registryType === 'npm');
          if (npm) npm.version = 'latest';
        }),
      ),
    ).toContain('/packages/0/version not');
    expect(
      refusals(
        broken((c) => {
          const mcpb = c.packages.find((p) => p.registryType === 'mcpb');
          if (mcpb) mcpb.fileSha256 = 'not-a-hash';
        }),
      ),
    ).toContain('/packages/1/fileSha256 pattern');
  });

  it('is in step with package.json: name, versions, npm package, release download', () => {
    expect(doc.name).toBe(pkg.mcpName);
    expect(doc.version).toBe(pkg.version);
    expect(doc.description.length).toBeLessThanOrEqual(100);
    expect(doc.repository).toEqual({ url: repoUrl, source: 'github' });
    for (const entry of doc.packages) {
      expect(entry.version, entry.registryType).toBe(pkg.version);
      expect(entry.transport, entry.registryType).toEqual({ type: 'stdio' });
    }
    expect(only('npm').identifier).toBe(pkg.name);
    const mcpb = only('mcpb');
    expect(mcpb.identifier).toBe(`${repoUrl}/releases/download/v${pkg.version}/${pkg.name}.mcpb`);
    expect(mcpb.fileSha256).toMatch(/^[a-f0-9]{64}$/);
  });

  it("lists exactly the variables server/config.ts reads, with the server's defaults", () => {
    const vars = only('npm').environmentVariables ?? [];
    expect(configVariables.length).toBeGreaterThan(0);
    expect(vars.map((v) => v.name).sort()).toEqual(configVariables);
    const parsed = parseConfig([], {});
    if (!parsed.ok) throw new Error(parsed.issues.join('\n'));
    for (const v of vars) {
      // The HTTPS listener's certificate and key are read with its address, and refused by name, outside SOURCES.
      const setting = settingOf.get(v.name) ?? (v.name.startsWith('ELICITLY_REMOTE_') ? settingOf.get('ELICITLY_REMOTE_LISTEN') : undefined);
      if (setting === undefined) throw new Error(`${v.name} is not in server/config.ts SOURCES`);
      const serverDefault: unknown = Object.entries(parsed.config).find(([key]) => key === setting)?.[1];
      if (serverDefault === undefined) {
        // Off unless set (the phone page's listener, a hub on another machine, another page directory): no default to list.
        expect(v.default, v.name).toBeUndefined();
        continue;
      }
      if (v.name === 'ELICITLY_STATE_DIR') {
        // Its default depends on the platform and the home directory: the description spells it out instead.
        expect(v.default).toBeUndefined();
        expect(v.format).toBe('filepath');
        continue;
      }
      expect(v.default, v.name).toBe(String(serverDefault));
      expect(v.format, v.name).toBe(typeof serverDefault === 'number' ? 'number' : 'string');
    }
    expect(vars.find((v) => v.name === 'ELICITLY_LOG_LEVEL')?.choices).toEqual(LogLevelSchema.options);
  });

  it('gets the hash and the versions of the bundle the script just wrote, and the committed file is left alone', () => {
    const stale = ServerJsonSchema.parse(JSON.parse(serverJsonText));
    stale.version = '0.0.1';
    for (const entry of stale.packages) {
      entry.version = '0.0.1';
      if (entry.registryType === 'mcpb') {
        entry.identifier = `${repoUrl}/releases/download/v0.0.1/${pkg.name}.mcpb`;
        entry.fileSha256 = '0'.repeat(64);
      }
    }
    const copy = join(work, 'server.json');
    const out = join(work, 'elicitly-companion.mcpb');
    writeFileSync(copy, `${JSON.stringify(stale, null, 2)}\n`);
    const bundle = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs'), '--out', out, '--server-json', copy], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      input: '',
    });
    expect(bundle.status, bundle.stderr).toBe(0);
    const written = createHash('sha256').update(readFileSync(out)).digest('hex');
    const updated = ServerJsonSchema.parse(JSON.parse(readFileSync(copy, 'utf8')));
    expect(updated.packages.find((p) => p.registryType === 'mcpb')?.fileSha256).toBe(written);
    const expected = ServerJsonSchema.parse(JSON.parse(serverJsonText));
    for (const entry of expected.packages) if (entry.registryType === 'mcpb') entry.fileSha256 = written;
    expect(updated).toEqual(expected);
    expect(refusals(updated)).toEqual([]);
    expect(readFileSync(SERVER_JSON, 'utf8')).toBe(serverJsonText);
  }, 120_000);
});
