// The npm package as people get it: the tarball `npm pack` makes, its size installed, how long an offline install of
// it takes into an empty folder, the cold start of the installed bin (spawn → tools/list), and the MCP Bundle's size.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, startServer } from './cold-start.mjs';
import { record } from './metrics.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALLS = 5;
const STARTS = 10;
const PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);

function treeBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(path) : statSync(path).size;
  }
  return total;
}
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

export async function packageBench() {
  const work = mkdtempSync(join(tmpdir(), 'elicitly-bench-pack-'));
  try {
    const [packed] = JSON.parse(execFileSync(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH } }));
    const tarball = join(work, packed.filename);
    const installs = [];
    let installed = 0;
    let bin = '';
    for (let i = 0; i < INSTALLS; i++) {
      const app = join(work, `app-${i}`);
      mkdirSync(app);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty-app', version: '1.0.0', private: true }));
      const began = performance.now();
      execFileSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', tarball], { cwd: app, stdio: 'ignore', env: { ...process.env, PATH } });
      installs.push(performance.now() - began);
      installed = treeBytes(join(app, 'node_modules', 'elicitly-companion'));
      bin = join(app, 'node_modules', '.bin', 'elicitly-companion');
    }
    const starts = [];
    for (let i = 0; i < STARTS; i++) {
      const started = await startServer(bin, [], { PATH, ELICITLY_STATE_DIR: join(work, 'state') });
      starts.push(started.ms);
      started.child.kill();
    }
    const mcpb = join(work, 'elicitly-companion.mcpb');
    const bundleBegan = performance.now();
    execFileSync(process.execPath, [join(ROOT, 'scripts/bundle.mjs'), '--out', mcpb], { cwd: ROOT, stdio: 'ignore' });
    const bundleMs = performance.now() - bundleBegan;
    console.log('npm package:');
    console.log(`  tarball ${packed.filename}: ${kb(packed.size)} (${packed.entryCount} files, ${kb(packed.unpackedSize)} unpacked)`);
    console.log(`  installed size (node_modules/elicitly-companion): ${kb(installed)}; nothing else installed`);
    console.log(`  npm install --offline of the tarball into an empty folder (median of ${INSTALLS}): ${median(installs).toFixed(0)} ms (min ${Math.min(...installs).toFixed(0)}, max ${Math.max(...installs).toFixed(0)})`);
    console.log(`  cold start of the installed bin, spawn → tools/list (median of ${STARTS}): ${median(starts).toFixed(1)} ms`);
    record('tarball_kb', 'npm tarball', packed.size / 1024, 'KB');
    record('installed_cold_start_ms', 'cold start of the installed bin (via its shim)', median(starts), 'ms');
    console.log(`MCP Bundle: ${kb(statSync(mcpb).size)} (scripts/bundle.mjs took ${bundleMs.toFixed(0)} ms, tools/list of the staged server included)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
