// What the ledger records besides a request's changes (issue 34): the keys that may call the hub (a paired extension,
// a paired phone, an exported relay key), added and removed whoever changed them (the hub's own pairing, `pair
// --remove`, `key revoke`, and a change made while no hub ran, recorded when the next one starts); and a request shown
// to a reviewer. The real server, its hub and its commands, with a scripted extension on the real wire.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { connect, SERVER_ENTRY, type Harness } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';
import { shownHash } from '../../shared/shown-hash.js';

let dir: string;
let env: Record<string, string>;
let agent: Harness | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-ledger-keys-'));
  env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()) };
});
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  rmSync(dir, { recursive: true, force: true });
});

type KeyEvent = { type: 'key.added' | 'key.removed'; role: string; keyId: string; origin?: string; name?: string; grants?: string[]; fingerprint?: string };
type ShownEvent = { type: 'request.shown'; id: string; surface: string; requestHash: string };

/** The ledger's events, in order. */
function events(): { type: string }[] {
  const ledger = join(dir, 'ledger');
  return readdirSync(ledger)
    .filter((f) => f.startsWith('segment-'))
    .sort()
    .flatMap((f) => readFileSync(join(ledger, f), 'utf8').split('\n').filter(Boolean))
    .map((line) => (JSON.parse(line) as { event: { type: string } }).event);
}
const keyEvents = () => events().filter((e): e is KeyEvent => e.type === 'key.added' || e.type === 'key.removed');
const shownEvents = () => events().filter((e): e is ShownEvent => e.type === 'request.shown');

const startHub = async () => {
  agent = await connect('v2-2025', { env });
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
};

it('a pairing, a removal and a revoked relay key reach the ledger as they happen, never the key itself', async () => {
  await startHub();
  const extension = pairedKey(dir);
  const relay = new StateDir(dir).addRelayKey('ci box', ['permission']);
  await until('the pairing and the relay key in the ledger', () => (keyEvents().length >= 2 ? true : undefined));
  expect(keyEvents()).toEqual(expect.arrayContaining([
    expect.objectContaining({ type: 'key.added', role: 'extension', keyId: extension.keyId, origin: expect.stringMatching(/^chrome-extension:\/\//), fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    expect.objectContaining({ type: 'key.added', role: 'relay', keyId: relay.keyId, name: 'ci box', grants: ['permission'] }),
  ]));
  expect(readFileSync(join(dir, 'ledger', 'segment-000001.jsonl'), 'utf8')).not.toContain(extension.key);

  // An extension is removed by its origin (`pair --remove`), a relay key by its id.
  expect((await runCommand(process.execPath, [SERVER_ENTRY, 'pair', '--remove', EXTENSION_ORIGIN], { env })).code).toBe(0);
  expect((await runCommand(process.execPath, [SERVER_ENTRY, 'key', 'revoke', relay.keyId], { env })).code).toBe(0);
  const removed = await until('both removals in the ledger', () => {
    const events = keyEvents().filter((e) => e.type === 'key.removed');
    return events.length >= 2 ? events : undefined;
  });
  expect(removed.map((e) => [e.role, e.keyId]).sort()).toEqual([['extension', extension.keyId ?? ''], ['relay', relay.keyId]].sort());
});

it('a key paired while no hub ran is recorded when the next hub starts, once', async () => {
  const extension = pairedKey(dir);
  await startHub();
  await until('the pairing in the ledger', () => (keyEvents().some((e) => e.keyId === extension.keyId) ? true : undefined));
  await agent?.close();
  await startHub();
  // A second start reads the same key: nothing new to say.
  await agent?.callTool('elicit_status', { elicitationId: 'el_again' });
  expect(keyEvents().filter((e) => e.keyId === extension.keyId)).toHaveLength(1);
});

it('a request shown on a reviewer is recorded once per surface, with the hash that surface rendered', async () => {
  await startHub();
  const id = (await agent?.callTool('elicit_approval', { message: 'Shown?', context: { a: 1 } }))?.structuredContent?.elicitationId as string;
  const ext = await ScriptedExtension.connect(Number(env.ELICITLY_PORT), { key: pairedKey(dir), hello: false });
  try {
    const [view] = (await ext.handshake()).pending.filter((v) => v.elicitationId === id);
    if (!view) throw new Error('not in the welcome');
    const hash = await shownHash(view);
    for (let i = 0; i < 3; i++) ext.send({ method: 'request.shown', params: { elicitationId: id, shownHash: hash } });
    // Showing a request that does not exist, or sending what is not a hash, records nothing and answers nothing.
    ext.send({ method: 'request.shown', params: { elicitationId: 'el_nope', shownHash: hash } });
    ext.send({ method: 'request.shown', params: { elicitationId: id, shownHash: 'nope' } });
    const shown = await until('the showing in the ledger', () => (shownEvents().length > 0 ? shownEvents() : undefined));
    // Once the hub answered a later call, every notice before it on the socket was handled.
    await ext.call('decide', { elicitationId: id, idempotencyKey: 'k1', decision: 'rejected' });
    expect(shownEvents()).toEqual([{ type: 'request.shown', id, surface: 'extension', requestHash: hash }]);
    expect(shown).toHaveLength(1);
  } finally {
    ext.close();
  }
});
