// The few file operations the installer needs: where a host keeps its settings, where that file really is when it
// is a symbolic link (dotfiles), reading it, and replacing it with a backup first. Nothing here decides what goes into
// a file (each host's settings functions do).
import { randomBytes } from 'node:crypto';
import { constants, copyFileSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { HookHost, HostDirs, Scope } from './hosts/hook-host.js';

/** Where `host` keeps its settings file of `scope`; undefined when its user folder is unknown (no HOME, no variable). */
export function settingsPath(host: HookHost, scope: Scope, dirs: HostDirs): string | undefined {
  if (scope === 'project') return join(dirs.cwd, ...host.settingsFile.project);
  const folder = dirs.user[host.id];
  return folder === undefined ? undefined : join(folder, host.settingsFile.user);
}

/**
 * A settings file as found: `path` is where the host reads it, `target` where its text really is (the final target of
 * every link on the way; `path` itself when there is none), `exists` whether there is a file yet, `linked` whether
 * `path` itself is a symbolic link.
 */
/** `why` names the file and says how to fix it; the caller says what it did not do. */
export type SettingsFile = { ok: true; path: string; target: string; exists: boolean; linked: boolean } | { ok: false; why: string };

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Follows `path` to the file whose text it is. A link that leads nowhere, links that loop, or anything but a regular
 * file are refused: writing there would replace the link or fail half-way. With `projectDir` (`--scope project`), a
 * target outside the project is refused too: a project-scoped command that wrote the person's file elsewhere (or copied
 * its text into the repo in place of the link) would surprise them either way.
 */
export function resolveSettings(path: string, projectDir?: string): SettingsFile {
  const absolute = resolve(path);
  let target: string;
  let exists: boolean;
  try {
    target = realpathSync(absolute);
    exists = true;
  } catch (error) {
    const code = errno(error);
    if (code === 'ELOOP') return { ok: false, why: `${path} leads through symbolic links that loop; fix the links by hand` };
    if (code !== 'ENOENT') return { ok: false, why: `${path} cannot be reached (${error instanceof Error ? error.message : String(error)})` };
    const missing = missingTarget(absolute, path);
    if (!missing.ok) return missing;
    target = missing.target;
    exists = false;
  }
  const linked = lstatOrNull(absolute)?.isSymbolicLink() ?? false;
  if (exists && !statSync(target).isFile()) {
    return { ok: false, why: `${path}${linked ? ` (a symbolic link to ${target})` : ''} is not a regular file` };
  }
  if (projectDir !== undefined) {
    const project = realpathSync(projectDir);
    const inside = relative(project, target);
    if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
      return {
        ok: false,
        why:
          `${path} ${linked ? 'is a symbolic link to' : 'resolves to'} ${target}, outside the project (${project}), and --scope project writes ` +
          'only inside it: use --scope user for settings of your own, or put a file in place of the link to share them with the project',
      };
    }
  }
  return { ok: true, path, target, exists, linked };
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * Where a file that does not exist yet would be created: its nearest existing folder, followed through its links, and
 * the missing names below it. A link among those names leads nowhere: refused, naming it and the settings file `path`.
 */
function missingTarget(absolute: string, path: string): { ok: true; target: string } | { ok: false; why: string } {
  const names: string[] = [];
  let dir = absolute;
  for (;;) {
    names.unshift(basename(dir));
    dir = dirname(dir);
    try {
      const real = realpathSync(dir);
      const first = join(dir, names[0]!);
      if (lstatOrNull(first)?.isSymbolicLink()) {
        const where = readlinkSync(first);
        const what = first === absolute ? `${path} is` : `${path}: its folder ${first} is`;
        return { ok: false, why: `${what} a symbolic link to ${where}, which does not exist; create it or remove the link` };
      }
      return { ok: true, target: join(real, ...names) };
    } catch (error) {
      if (errno(error) !== 'ENOENT' || dir === dirname(dir)) throw error;
    }
  }
}

/** The file's text, or null when there is none yet. */
export function readSettings(file: { target: string; exists: boolean }): string | null {
  return file.exists ? readFileSync(file.target, 'utf8') : null;
}

/** Removes a file that is ours alone, a copy of it kept beside it first (as a write keeps one). Returns the copy's path. */
export function removeSettings(file: { target: string; exists: boolean }, now = new Date()): string | null {
  if (!file.exists) return null;
  const backup = `${file.target}.elicitly-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
  copyFileSync(file.target, backup, constants.COPYFILE_EXCL);
  rmSync(file.target);
  return backup;
}

/**
 * Replaces the file's text where it really is (a link stays a link): a copy of the old file first, beside it
 * (`<file>.elicitly-backup-<timestamp>`), then a new temporary file in the same folder renamed over it, so a crash
 * leaves the old file or the new one, never half of one. Returns the backup's path.
 */
export function writeSettings(file: { target: string; exists: boolean }, text: string, now = new Date()): string | null {
  const { target } = file;
  let backup: string | null = null;
  let mode = 0o644;
  if (file.exists) {
    mode = statSync(target).mode & 0o777;
    backup = `${target}.elicitly-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
    // EXCL: never through something already at that name.
    copyFileSync(target, backup, constants.COPYFILE_EXCL);
  } else {
    mkdirSync(dirname(target), { recursive: true });
  }
  const temporary = `${target}.elicitly-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, text, { mode, flag: 'wx' });
  try {
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return backup;
}
