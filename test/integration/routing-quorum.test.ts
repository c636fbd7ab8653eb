// Routing and quorum (issue 39, part 4), on the built server: the team's `routing.json` sends production approvals to
// the ops group with a quorum of two. Only ops reviewers hear of such a request or may decide it; it is approved when
// two distinct ops reviewers approved the same values, rejected by the first rejection; the agent sees the approvals
// so far in `elicit_status` and cannot name reviewers or a quorum itself. A policy that does not parse files nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { freePort, ScriptedExtension } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-routing-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port) };
const ROUTING = { version: 1, routes: [{ name: 'production approvals', match: { kinds: ['approval'] }, groups: ['ops'], quorum: 2 }] };

let agent: Harness;
const extensions: ScriptedExtension[] = [];
let ana: ScriptedExtension;
let ben: ScriptedExtension;
let cy: ScriptedExtension;

/** A browser paired for this reviewer (the state dir as `reviewer add` and `pair --reviewer` leave it). */
async function reviewerBrowser(state: StateDir, name: string): Promise<ScriptedExtension> {
  const entry = state.pairedExtensions().find((e) => e.reviewer === name);
  if (!entry) throw new Error(`no browser for ${name}`);
  const ext = await ScriptedExtension.connect(port, { key: { keyId: entry.keyId, key: entry.key } });
  extensions.push(ext);
  return ext;
}

beforeAll(async () => {
  const state = new StateDir(dir);
  for (const [name, groups] of [['Ana Pérez', ['ops']], ['Ben Okafor', ['ops', 'dev']], ['Cy Li', ['dev']]] as const) {
    state.putReviewer(name, [...groups]);
    state.addPairedExtension(EXTENSION_ORIGIN, Date.now(), name);
  }
  writeFileSync(join(dir, 'routing.json'), JSON.stringify(ROUTING), { mode: 0o600 });
  agent = await connect('v2-2025', { env });
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
  ana = await reviewerBrowser(state, 'Ana Pérez');
  ben = await reviewerBrowser(state, 'Ben Okafor');
  cy = await reviewerBrowser(state, 'Cy Li');
}, 60_000);
afterAll(async () => {
  for (const ext of extensions) ext.socket.terminate();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a team\'s routing policy and quorum', () => {
  it('a routed request reaches only its group; two distinct ops reviewers approve it; status shows the approvals so far', async () => {
    const created = await agent.callTool('elicit_approval', { message: 'Deploy build 77 to production?', context: { build: 77 } });
    const id = String(created.structuredContent?.elicitationId);
    await Promise.all([ana.notice('request.created', (p) => p.request.elicitationId === id, 10_000), ben.notice('request.created', (p) => p.request.elicitationId === id, 10_000)]);
    // A request the policy does not route reaches everyone; Cy hears it, and nothing of the routed one before it.
    const open = await agent.callTool('elicit_proposal', structuredClone(northmarkProposal));
    const openId = String(open.structuredContent?.elicitationId);
    await cy.notice('request.created', (p) => p.request.elicitationId === openId, 10_000);
    expect(cy.notices('request.created').map((p) => p.request.elicitationId)).not.toContain(id);

    // Cy is not in ops: refused, naming the rule.
    const refused = await cy.call('decide', { elicitationId: id, idempotencyKey: 'cy-1', decision: 'approved' }, 10_000);
    expect(refused.result).toMatchObject({ ok: false, reason: 'invalid', issues: [expect.objectContaining({ path: 'elicitationId', rule: 'not_your_group' })] });

    const first = await ana.call('decide', { elicitationId: id, idempotencyKey: 'ana-1', decision: 'approved' }, 10_000);
    expect(first.result).toEqual({ ok: true, status: 'pending' });
    // The same person approving again is still one approval.
    const again = await ana.call('decide', { elicitationId: id, idempotencyKey: 'ana-2', decision: 'approved' }, 10_000);
    expect(again.result).toEqual({ ok: true, status: 'pending' });
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending', approvals: { given: 1, needed: 2, by: ['Ana Pérez'] } });

    const second = await ben.call('decide', { elicitationId: id, idempotencyKey: 'ben-1', decision: 'approved' }, 10_000);
    expect(second.result).toEqual({ ok: true, status: 'approved' });
    const result = await agent.callTool('elicit_result', { elicitationId: id });
    expect(result.structuredContent).toMatchObject({ decision: 'approved', decidedBy: 'Ben Okafor', approvedBy: ['Ana Pérez', 'Ben Okafor'] });
  });

  it('the first rejection rejects, whatever approvals came before', async () => {
    const created = await agent.callTool('elicit_approval', { message: 'Drop the old orders table?', context: {} });
    const id = String(created.structuredContent?.elicitationId);
    await ana.notice('request.created', (p) => p.request.elicitationId === id, 10_000);
    expect((await ana.call('decide', { elicitationId: id, idempotencyKey: 'ana-3', decision: 'approved' }, 10_000)).result).toEqual({ ok: true, status: 'pending' });
    expect((await ben.call('decide', { elicitationId: id, idempotencyKey: 'ben-3', decision: 'rejected', comment: 'not during the sale' }, 10_000)).result).toEqual({ ok: true, status: 'rejected' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ decision: 'rejected', decidedBy: 'Ben Okafor', comment: 'not during the sale' });
  });

  it('the agent cannot name its reviewers or a quorum; a policy that does not parse files nothing, naming the field', async () => {
    const chosen = await agent.callTool('elicit_approval', { message: 'Ship it?', context: {}, reviewers: ['Cy Li'], quorum: 1 });
    expect(chosen.isError).toBe(true);
    expect(JSON.stringify(chosen.structuredContent)).toContain('reviewers');

    writeFileSync(join(dir, 'routing.json'), JSON.stringify({ ...ROUTING, routes: [{ ...ROUTING.routes[0], quorum: 0 }] }), { mode: 0o600 });
    // The hub reads the file again once its watcher saw the change (a few ms after the write): asked until then, bounded.
    let damaged = await agent.callTool('elicit_approval', { message: 'Ship it?', context: {} });
    for (let i = 0; i < 100 && !damaged.isError; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      damaged = await agent.callTool('elicit_approval', { message: 'Ship it?', context: {} });
    }
    expect(damaged.isError).toBe(true);
    expect(damaged.structuredContent).toMatchObject({ error: 'unavailable', message: expect.stringMatching(/routing\.json: routes\[0\]\.quorum/) });
    // The hub's log says it too, for whoever runs it (its stderr arrives on its own pipe: looked at until it has, bounded).
    const logged = /the team's routing policy does not parse.*routes\[0\]\.quorum/;
    for (let i = 0; i < 100 && !logged.test(agent.stderr()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(agent.stderr()).toMatch(logged);
    writeFileSync(join(dir, 'routing.json'), JSON.stringify(ROUTING), { mode: 0o600 });
  });
});
