// The few file operations the installer needs: where each host keeps its settings, reading one, and replacing one
// with a backup first. Nothing here decides what goes into a file (hooks-settings.ts does).
import { copyFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { HostAgent } from '../../shared/permission.js';

export type Scope = 'user' | 'project';

/** Where the hosts keep their settings, from the parsed configuration (CLAUDE_CONFIG_DIR, CODEX_HOME, HOME, the cwd). */
export interface HostDirs {
  claudeConfigDir?: string;
  codexHome?: string;
  cwd: string;
}

export function settingsPath(host: HostAgent, scope: Scope, dirs: HostDirs): string | undefined {
  if (host === 'claude-code') {
    if (scope === 'project') return join(dirs.cwd, '.claude', 'settings.json');
    return dirs.claudeConfigDir === undefined ? undefined : join(dirs.claudeConfigDir, 'settings.json');
  }
  if (scope === 'project') return join(dirs.cwd, '.codex', 'config.toml');
  return dirs.codexHome === undefined ? undefined : join(dirs.codexHome, 'config.toml');
}

/** The file's text, or null when there is none. */
export function readSettings(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Replaces the file's text: a copy of the old file first (`<file>.elicitly-backup-<timestamp>`), then a temporary file
 * renamed over it, so a crash leaves the old file or the new one, never half of one. Returns the backup's path.
 */
export function writeSettings(path: string, text: string, now = new Date()): string | null {
  mkdirSync(dirname(path), { recursive: true });
  let backup: string | null = null;
  let mode = 0o644;
  try {
    mode = statSync(path).mode & 0o777;
    backup = `${path}.elicitly-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(path, backup);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const temporary = `${path}.elicitly-${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
  return backup;
}
