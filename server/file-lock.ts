import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import * as z from 'zod';
import { log } from './log.js';
import { stateFileOpenError, UnsafeStateFileError } from './private-files.js';

/**
 * An inter-process lock for read-modify-write of a state file: `<file>.lock`, created with O_EXCL. Without it two
 * processes (two `pair --remove`, or one and the hub adding a key) each read the old list and the last rename wins,
 * bringing back what the other removed. The callers are synchronous (the hub's handshake, the pair command), so the
 * wait is too: bounded, in short sleeps, and a lock whose holder died is broken.
 */

/** How long to wait for a lock before giving up; a holder keeps it for one read and one small fsync'd write. */
const WAIT_MS = 3000;
/** A lock older than this is stale even if its pid looks alive (pids are reused); holds last milliseconds. */
const STALE_MS = 10_000;
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

const LockOwnerSchema = z.strictObject({ pid: z.number().int(), token: z.string(), at: z.number() });
type LockOwner = z.infer<typeof LockOwnerSchema>;

export class LockTimeoutError extends Error {}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** Whether a process with this pid exists (EPERM: it does, it is just not ours to signal). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What the lock file says, with its age from the file itself when its content is missing (a crash right after create). */
interface SeenLock {
  owner: LockOwner | undefined;
  mtimeMs: number;
  /** Which file it was: a lock broken and taken again by someone else in between is another inode. */
  ino: number;
}

function readLock(lock: string): SeenLock | undefined {
  let fd: number;
  try {
    fd = openSync(lock, constants.O_RDONLY | NO_FOLLOW | NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw stateFileOpenError(lock, error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnsafeStateFileError(`${lock} is not a regular file; refusing it`);
    let owner: LockOwner | undefined;
    try {
      const parsed = LockOwnerSchema.safeParse(JSON.parse(readFileSync(fd, 'utf8')));
      owner = parsed.success ? parsed.data : undefined;
    } catch {
      owner = undefined;
    }
    return { owner, mtimeMs: stat.mtimeMs, ino: stat.ino };
  } finally {
    closeSync(fd);
  }
}

function isStale(seen: SeenLock, now: number): boolean {
  if (seen.owner && seen.owner.pid !== process.pid && !alive(seen.owner.pid)) return true;
  return now - (seen.owner?.at ?? seen.mtimeMs) > STALE_MS;
}

/**
 * Moves a stale lock aside and removes it, but only if it is still the one judged stale: between the judgement and the
 * rename another process may have broken it and taken a fresh one, which is put back.
 */
function breakStale(lock: string, judged: SeenLock): void {
  const aside = `${lock}.${randomBytes(6).toString('hex')}.stale`;
  try {
    renameSync(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (readLock(aside)?.ino !== judged.ino) {
    try {
      linkSync(aside, lock);
    } catch {
      // Someone took the lock meanwhile: theirs stands, and the one moved aside is lost to its holder.
    }
  } else {
    log('warn', 'broke a stale state-file lock', { lock, pid: judged.owner?.pid });
  }
  unlinkSync(aside);
}

function tryAcquire(lock: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw stateFileOpenError(lock, error);
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  return true;
}

function release(lock: string, owner: LockOwner): void {
  try {
    // Only our own: had it been broken as stale, removing another's lock would let a third process in beside it.
    if (readLock(lock)?.owner?.token === owner.token) unlinkSync(lock);
  } catch (error) {
    log('warn', 'could not release a state-file lock', { lock, error: String(error) });
  }
}

/** Runs `body` holding `<file>.lock`; throws LockTimeoutError, naming the lock, if it cannot be had within a few seconds. */
export function withFileLock<T>(file: string, body: () => T, waitMs = WAIT_MS): T {
  const lock = `${file}.lock`;
  const owner: LockOwner = { pid: process.pid, token: randomBytes(8).toString('hex'), at: Date.now() };
  const deadline = Date.now() + waitMs;
  let pause = 1;
  for (;;) {
    owner.at = Date.now();
    if (tryAcquire(lock, owner)) break;
    const seen = readLock(lock);
    const stale = seen !== undefined && isStale(seen, Date.now());
    if (stale) breakStale(lock, seen);
    if (Date.now() >= deadline) {
      const holder = seen?.owner ? ` (held by pid ${seen.owner.pid})` : '';
      throw new LockTimeoutError(`could not lock ${file} within ${waitMs} ms${holder}; if no elicitly-companion process is running, remove ${lock}`);
    }
    // Gone or broken: try again at once. Held: wait a little, jittered so that waiters do not retry in lockstep.
    if (seen === undefined || stale) continue;
    sleepSync(Math.min(pause, Math.max(1, deadline - Date.now())) * (0.5 + Math.random()));
    pause = Math.min(pause * 2, 10);
  }
  try {
    return body();
  } finally {
    release(lock, owner);
  }
}
