import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The state dir holds what people approved and the keys that let processes and extensions in: it must be a real
 * directory of this user's, readable by nobody else. Nothing here follows a symbolic link: a link planted in its place
 * would otherwise hand those files, or a chmod, to its target.
 */
export class UnsafeStateDirError extends Error {}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

/** Creates the dir (0700) if missing; refuses one that is a symlink, not a directory, or owned by another user. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink()) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it is a symbolic link; point ELICITLY_STATE_DIR at the real directory`);
  if (!stat.isDirectory()) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it belongs to user ${stat.uid}, not to you (${uid})`);
  if ((stat.mode & 0o777) === 0o700) return;
  // mkdir's mode is filtered by the umask and ignored for an existing dir. fchmod on a descriptor opened without
  // following links: the path cannot be swapped for a link between the check above and the change.
  const fd = openSync(dir, constants.O_RDONLY | NO_FOLLOW | DIRECTORY);
  try {
    fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

/** The file's text, or undefined when it does not exist. A symlink in its place is an error, never followed. */
export function readPrivateFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Writes a whole file 0600 in a fresh temp file, fsync'd; returns the temp path for the caller to move into place. */
function writeTemp(file: string, content: string): string {
  const temp = join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o600);
  try {
    const buffer = Buffer.from(content, 'utf8');
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

/** Replaces the file atomically: readers see the old content or the new, never a half-written one. */
export function writePrivateFile(file: string, content: string): void {
  const temp = writeTemp(file, content);
  try {
    renameSync(temp, file);
  } catch (error) {
    unlinkSync(temp);
    throw error;
  }
}

/**
 * Creates the file with this content only if it does not exist yet: a hard link to a complete temp file, so there is
 * no moment when the file exists but is empty. Returns false when another process created it first.
 */
export function createPrivateFile(file: string, content: string): boolean {
  const temp = writeTemp(file, content);
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}
