import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The state dir holds what people approved and the keys that let processes and extensions in: it must be a real
 * directory of this user's, readable by nobody else. Nothing here follows a symbolic link: a link planted in its place
 * would otherwise hand those files, or a chmod, to its target.
 */
export class UnsafeStateDirError extends Error {}

/** A file in the state dir that must not be used: a link, a FIFO or device, someone else's, or open to others. */
export class UnsafeStateFileError extends UnsafeStateDirError {}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;
/** A FIFO planted in a file's place would block open() forever (and with it the hub); with this it opens at once and fstat refuses it. */
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Windows has neither owners by uid nor POSIX modes, so those rules only apply where getuid exists. */
const myUid = (): number | undefined => process.getuid?.();

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * How strictly a state file's mode is judged. `secret`: keys and pairing data, where a file others could merely read
 * has already leaked and one they could write may be planted, so any group/other bit refuses it. `journal`: what
 * others could write is refused, what they could only read is tightened to 0600 (its content is not a key).
 */
export type StateFileRule = 'secret' | 'journal';

/** Creates the dir (0700) if missing; refuses one that is a symlink, not a directory, owned by another user, or writable by others. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = myUid();
  if (uid === undefined) {
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) throw new UnsafeStateDirError(symlinkedDir(dir));
    if (!stat.isDirectory()) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it is not a directory`);
    return;
  }
  // Every check on one descriptor opened without following links: the path cannot be swapped between check and chmod.
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | NO_FOLLOW | DIRECTORY | NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Linux answers O_NOFOLLOW|O_DIRECTORY on a link with ENOTDIR; lstat only words the refusal, it decides nothing.
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'ENOTDIR') {
      throw new UnsafeStateDirError(lstatSync(dir).isSymbolicLink() ? symlinkedDir(dir) : `refusing the state dir ${dir}: it is not a directory`);
    }
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isDirectory()) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it is not a directory`);
    if (stat.uid !== uid) throw new UnsafeStateDirError(`refusing the state dir ${dir}: it belongs to user ${stat.uid}, not to you (${uid})`);
    // We never make such a dir (mkdir's 0700 is only ever narrowed by the umask), so someone else did or widened it,
    // and any file in it may have been planted. Tightening it now would bless those files: the person must look first.
    if ((stat.mode & 0o022) !== 0) {
      throw new UnsafeStateDirError(
        `refusing the state dir ${dir}: it is writable by group or others (mode ${octal(stat.mode)}), so files in it may have been planted; ` +
          `check what is in it, then run \`chmod 700 ${dir}\``,
      );
    }
    // Merely readable by others (an older install, a hand-made dir): nothing can have been planted, so tighten it.
    if ((stat.mode & 0o777) !== 0o700) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

function symlinkedDir(dir: string): string {
  return `refusing the state dir ${dir}: it is a symbolic link; point ELICITLY_STATE_DIR at the real directory`;
}

/** The open error as a refusal that names the file, when it means the path is not a file we may use. */
export function stateFileOpenError(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  // O_NOFOLLOW fails with ELOOP (EMLINK on FreeBSD) on a link in the last component.
  if (code === 'ELOOP' || code === 'EMLINK') return new UnsafeStateFileError(`${file} is a symbolic link; refusing it`, { cause: error });
  // A FIFO opened for writing with O_NONBLOCK and no reader.
  if (code === 'ENXIO') return new UnsafeStateFileError(`${file} is not a regular file (a FIFO or device); refusing it`, { cause: error });
  return error;
}

function kindOf(stat: Pick<Stats, 'isFIFO' | 'isDirectory' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a plain file';
}

/**
 * Why the file opened as `stat` must not be used, or undefined when it may (and whether its mode needs tightening).
 * Judged on the descriptor's fstat, never on a path stat'ed before opening, so a swap in between cannot fool it.
 */
export function checkStateFile(file: string, stat: Stats, rule: StateFileRule): { refuse: UnsafeStateFileError } | { tighten: boolean } {
  if (!stat.isFile()) return { refuse: new UnsafeStateFileError(`${file} is not a regular file (${kindOf(stat)}); refusing it`) };
  const uid = myUid();
  if (uid === undefined) return { tighten: false };
  if (stat.uid !== uid) {
    return { refuse: new UnsafeStateFileError(`${file} belongs to user ${stat.uid}, not to you (${uid}); refusing it: a state file must be yours alone`) };
  }
  const forbidden = rule === 'secret' ? 0o077 : 0o022;
  if ((stat.mode & forbidden) !== 0) {
    const what = rule === 'secret' ? 'readable or writable by group or others' : 'writable by group or others';
    return { refuse: new UnsafeStateFileError(`${file} is ${what} (mode ${octal(stat.mode)}); refusing it: a state file must be yours alone (0600). Remove it and it is made anew`) };
  }
  return { tighten: (stat.mode & 0o077) !== 0 };
}

/**
 * Opens a state file without following a link and without blocking, and refuses (closing it) anything but a regular
 * file of this user's that nobody else can touch. Returns undefined when the file does not exist.
 */
function openStateFile(file: string, flags: number, rule: StateFileRule): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, flags | NO_FOLLOW | NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw stateFileOpenError(file, error);
  }
  try {
    const verdict = checkStateFile(file, fstatSync(fd), rule);
    if ('refuse' in verdict) throw verdict.refuse;
    if (verdict.tighten) fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The file's text, or undefined when it does not exist. A link, a FIFO, someone else's file or one open to others is refused by name. */
export function readPrivateFile(file: string): string | undefined {
  const fd = openStateFile(file, constants.O_RDONLY, 'secret');
  if (fd === undefined) return undefined;
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
