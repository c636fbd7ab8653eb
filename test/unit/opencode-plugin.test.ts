// OpenCode's bridge is a plugin file of ours alone: written whole with the hook command in it, recognized as ours,
// replaced when the command changes, removed on uninstall; a file of the same name that is not ours is never touched.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Desired } from '../../server/hook/hooks-settings.js';
import { opencode } from '../../server/hook/hosts/opencode.js';

const desired: Desired = { host: opencode, node: '/usr/bin/node', script: "/opt/it's/main.js", events: ['permission.asked'], waitSeconds: 110, waitingDir: '', env: { ELICITLY_PORT: '18000' } };
const COMMAND = `ELICITLY_PORT=18000 /usr/bin/node '/opt/it'\\''s/main.js' hook --host opencode --wait 110 permission.asked`;

describe('the OpenCode plugin file', () => {
  it('install writes the plugin with the hook command; twice changes nothing; another wait replaces it; uninstall removes it', async () => {
    const settings = await opencode.settings();
    const fresh = settings.merge(null, desired);
    if (!fresh.ok || fresh.text === null) throw new Error('installs');
    expect(fresh.changes).toEqual([`added permission.asked: ${COMMAND} (timeout 120 s)`]);
    expect(fresh.text).toContain(`const COMMAND = ${JSON.stringify(COMMAND)};`);
    expect(settings.installed(fresh.text)).toEqual([{ event: 'permission.asked', command: COMMAND, timeout: 120 }]);
    expect(settings.merge(fresh.text, desired)).toEqual({ ok: true, text: fresh.text, changes: [] });
    const longer = settings.merge(fresh.text, { ...desired, waitSeconds: 300 });
    expect(longer.ok && longer.changes).toEqual([`updated permission.asked: ${COMMAND.replace('110', '300')} (timeout 310 s)`]);
    expect(settings.unmerge(fresh.text)).toEqual({ ok: true, text: null, changes: ['removed permission.asked (the plugin file)'] });
    expect(settings.unmerge(null)).toEqual({ ok: true, text: '', changes: [] });

    // What OpenCode loads is a module Node can parse.
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-opencode-'));
    try {
      writeFileSync(join(dir, 'elicitly.mjs'), fresh.text);
      const check = spawnSync(process.execPath, ['--check', join(dir, 'elicitly.mjs')], { encoding: 'utf8', timeout: 10_000 });
      expect(check.status, check.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a plugin of the same name that is not ours is refused, never overwritten or removed', async () => {
    const settings = await opencode.settings();
    const theirs = 'export const Mine = async () => ({});\n';
    for (const merged of [settings.merge(theirs, desired), settings.unmerge(theirs)]) {
      expect(merged.ok).toBe(false);
      if (!merged.ok) expect(merged.why).toMatch(/was not written by elicitly-companion/);
    }
    expect(settings.installed(theirs)).toEqual([]);
  });
});
