// Copilot CLI's hook file: ours alone by name (`hooks/elicitly.json`), yet an entry someone added to it stays, an install
// twice changes nothing, and an uninstall takes out exactly ours.
import { describe, expect, it } from 'vitest';
import type { Desired, Merged } from '../../server/hook/hooks-settings.js';
import { copilotCli } from '../../server/hook/hosts/copilot-cli.js';

const desired: Desired = { host: copilotCli, node: '/usr/bin/node', script: '/opt/e/main.js', events: ['permissionRequest'], waitSeconds: 110, waitingDir: '' };
const COMMAND = '/usr/bin/node /opt/e/main.js hook --host copilot-cli --wait 110 permissionRequest';
const theirs = { type: 'command', bash: './audit.sh', timeoutSec: 5 };

const ok = (merged: Merged) => {
  if (!merged.ok) throw new Error(merged.why);
  // These files keep the person's own settings: a merge never removes them.
  if (merged.text === null) throw new Error('the file would be removed');
  return { ...merged, text: merged.text };
};

describe('Copilot CLI hooks/elicitly.json', () => {
  it('install writes the file; twice changes nothing; someone else\'s entry stays; uninstall takes out only ours', async () => {
    const settings = await copilotCli.settings();
    const fresh = ok(settings.merge(null, desired));
    expect(JSON.parse(fresh.text)).toEqual({ version: 1, hooks: { permissionRequest: [{ type: 'command', bash: COMMAND, timeoutSec: 120 }] } });
    expect(fresh.changes).toEqual([`added permissionRequest: ${COMMAND} (timeout 120 s)`]);
    expect(ok(settings.merge(fresh.text, desired))).toEqual({ ok: true, text: fresh.text, changes: [] });
    expect(settings.installed(fresh.text)).toEqual([{ event: 'permissionRequest', command: COMMAND, timeout: 120 }]);

    const shared = JSON.stringify({ version: 1, hooks: { permissionRequest: [theirs, { type: 'command', bash: COMMAND.replace('110', '30'), timeoutSec: 40 }] } });
    const updated = ok(settings.merge(shared, { ...desired, events: ['preToolUse'] }));
    expect(JSON.parse(updated.text)).toEqual({ version: 1, hooks: { preToolUse: [{ type: 'command', bash: COMMAND.replace('permissionRequest', 'preToolUse'), timeoutSec: 120 }], permissionRequest: [theirs] } });
    expect(JSON.parse(ok(settings.unmerge(updated.text)).text)).toEqual({ version: 1, hooks: { permissionRequest: [theirs] } });
  });

  it.each([['{ nope', /is not valid JSON/], ['[]', /is not a JSON object/], ['{"hooks": 1}', /"hooks" is not an object/]])('%s is refused, never overwritten', async (text, why) => {
    const merged = (await copilotCli.settings()).merge(text, desired);
    expect(merged.ok).toBe(false);
    if (!merged.ok) expect(merged.why).toMatch(why);
  });
});
