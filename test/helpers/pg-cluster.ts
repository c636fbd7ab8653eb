// A throw-away PostgreSQL cluster for a test or a bench: Debian's own binaries, `initdb` into a temp dir and `pg_ctl`
// on a free loopback port, as a user that is not root (PostgreSQL refuses to run as root: under root the cluster is
// the `postgres` user's, through runuser). Never a mock of the store.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgDirectory } from '../../server/store/pg-directory.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { freePort, type PairedKey } from './scripted-extension.js';

/** Debian's server binaries (`postgresql-NN`), the newest installed; PG_BIN overrides. */
export function postgresBin(): string | null {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'initdb')) ? process.env.PG_BIN : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

export interface PgCluster {
  /** `postgres://elicitly@127.0.0.1:<port>/elicitly` (trust on loopback: the cluster lives only for the test). */
  url: string;
  port: number;
  /** Stops every process of the cluster (SIGSTOP: the postmaster and each backend), as a frozen database server. */
  pause(): void;
  resume(): void;
  stop(): void;
}

const asOwner = (bin: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];

function run(bin: string, args: string[]): void {
  const [command, argv] = asOwner(bin, args);
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')}: exit ${result.status}\n${result.stdout}\n${result.stderr}`);
}

/** `signal` to the postmaster and every process it started (its backends, the checkpointer, the WAL writer…). */
function signalAll(postmaster: number, signal: NodeJS.Signals): void {
  const children = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === postmaster;
    } catch {
      return false;
    }
  });
  for (const pid of [postmaster, ...children.map(Number)]) process.kill(pid, signal);
}

/** Starts a fresh cluster with a database `elicitly` owned by the role `elicitly`. */
export function startPgCluster(): PgCluster {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL server binaries not found (Debian: apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  run(join(bin, 'initdb'), ['-D', data, '-U', 'elicitly', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = freePort();
  run(join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '30', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on`, 'start']);
  run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'elicitly', 'elicitly']);
  let stopped = false;
  return {
    url: `postgres://elicitly@127.0.0.1:${port}/elicitly`,
    port,
    pause: () => signalAll(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGSTOP'),
    resume: () => signalAll(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGCONT'),
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A browser's key in a team's directory (the database's, as a hub with `--database` reads it): the one paired for
 * `origin` (and `reviewer`), or a new one. The database's counterpart of `pairedKey(stateDir)`.
 */
export async function pairedKeyIn(url: string, origin = EXTENSION_ORIGIN, reviewer?: string): Promise<PairedKey> {
  const directory = await PgDirectory.open({ url });
  try {
    const entry = directory.pairedExtensions().find((e) => e.origin === origin && e.reviewer === reviewer) ?? (await directory.addPairedExtension(origin, Date.now(), reviewer));
    return { keyId: entry.keyId, key: entry.key };
  } finally {
    await directory.close();
  }
}

/** Changes a team's directory as `reviewer add` and the other commands do with ELICITLY_DATABASE_URL. */
export async function withDirectoryIn<T>(url: string, body: (directory: PgDirectory) => Promise<T>): Promise<T> {
  const directory = await PgDirectory.open({ url });
  try {
    return await body(directory);
  } finally {
    await directory.close();
  }
}
