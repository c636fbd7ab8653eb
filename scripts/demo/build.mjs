// Builds what the demo runs, only when needed: a missing output, or one older than any of its sources.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Each output the demo needs, what it is built from, and the command that builds it. */
export function buildTargets(root) {
  return [
    {
      output: join(root, 'dist/server/main.js'),
      sources: ['server', 'shared', 'app', 'phone', 'kit', 'scripts'].map((p) => join(root, p)),
      command: ['npm', ['run', 'build:server']],
    },
    {
      output: join(root, '.output/chrome-mv3/manifest.json'),
      sources: ['entrypoints', 'extension', 'kit', 'shared', 'public', 'wxt.config.ts'].map((p) => join(root, p)),
      command: ['npx', ['wxt', 'build']],
    },
  ];
}

/** The newest file under `paths` (files or folders), or undefined when there is none. */
function newestFile(paths) {
  let newest;
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if (!newest || stat.mtimeMs > newest.mtimeMs) {
      newest = { path, mtimeMs: stat.mtimeMs };
    }
  };
  for (const path of paths) visit(path);
  return newest;
}

/** Why `target` needs building, in words, or null when it is up to date. */
export function staleReason(root, target) {
  const output = statSync(target.output, { throwIfNoEntry: false });
  if (!output) return `${relative(root, target.output)} is missing`;
  const newest = newestFile(target.sources);
  if (newest && newest.mtimeMs > output.mtimeMs) return `${relative(root, target.output)} is older than ${relative(root, newest.path)}`;
  return null;
}

/**
 * Runs each stale target's build, saying why. The builds' own output goes to stderr so that `--json` keeps stdout to
 * the JSON lines. With `build: false` a stale output is used as is, but a missing one is still an error.
 */
export function ensureBuilt(root, { build, log }) {
  for (const target of buildTargets(root)) {
    const reason = staleReason(root, target);
    if (!reason) continue;
    const [command, args] = target.command;
    const shown = `${command} ${args.join(' ')}`;
    if (!build) {
      if (!existsSync(target.output)) throw new Error(`${reason}; build it with: ${shown} (or drop --no-build)`);
      log(`note: ${reason}; using it anyway (--no-build)`);
      continue;
    }
    log(`build: ${reason}; running ${shown}`);
    // npm and npx are .cmd scripts on Windows, which only a shell runs.
    const run = spawnSync(command, args, { cwd: root, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' });
    if (run.error) throw new Error(`${shown} could not start: ${run.error.message}`);
    if (run.status !== 0) throw new Error(`${shown} failed (exit code ${run.status ?? run.signal}); its output is above`);
    if (!existsSync(target.output)) throw new Error(`${shown} finished but ${relative(root, target.output)} is still missing`);
  }
}
