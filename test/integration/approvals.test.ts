import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { northmarkProposal } from '../fixtures/northmark.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { ScriptedExtension, freePort } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-approvals-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1' };
let agent: Harness;
let ext: ScriptedExtension;

const json = (result: { content?: unknown[] }) => JSON.parse((result.content?.[0] as { text: string }).text) as Record<string, unknown>;

async function create(tool: string, args: Record<string, unknown>): Promise<string> {
  const created = await agent.callTool(tool, args);
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toMatchObject({ status: 'pending', reviewer: { connected: expect.any(Boolean) } });
  return (created.structuredContent as { elicitationId: string }).elicitationId;
}

beforeAll(async () => {
  agent = await connect('v2-2025', { env });
  // The first approval call makes this process the hub.
  const warm = await agent.callTool('elicit_status', { elicitationId: 'el_none' });
  expect(json(warm)).toMatchObject({ error: 'not_found' });
  ext = await ScriptedExtension.connect(port);
});

afterAll(async () => {
  ext?.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the NorthMark proposal (seed 004) end to end', () => {
  it('delivers the request, wakes elicit_await on the decision, and returns only the included fields', async () => {
    const id = await create('elicit_proposal', structuredClone(northmarkProposal));
    const pushed = await ext.next<'request.created'>((m) => m.type === 'request.created');
    expect(pushed.request).toMatchObject({ elicitationId: id, kind: 'proposal', status: 'pending', message: northmarkProposal.message });
    expect(pushed.request.request).toMatchObject({ columns: northmarkProposal.columns, fields: northmarkProposal.fields });

    const waiting = agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 30 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const decidedAt = Date.now();
    ext.send({
      type: 'decide',
      elicitationId: id,
      idempotencyKey: 'k-northmark',
      decision: 'approved',
      included: ['name', 'website', 'employeeCount'],
      values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 230 },
    });
    expect(await ext.next((m) => m.type === 'decision.result')).toMatchObject({ ok: true, status: 'approved', elicitationId: id });
    expect((await waiting).structuredContent).toEqual({ status: 'approved' });
    expect(Date.now() - decidedAt).toBeLessThan(1000);

    const expected = {
      status: 'consumed',
      decision: 'approved',
      action: 'submit',
      context: northmarkProposal.context,
      values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 230 },
    };
    const result = await agent.callTool('elicit_result', { elicitationId: id });
    expect(result.structuredContent).toEqual(expected);
    expect(json(result)).toEqual(expected);
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual(expected);
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'consumed' });
  });

  it('refuses invalid values with per-field messages and keeps the request pending', async () => {
    const id = await create('elicit_proposal', structuredClone(northmarkProposal));
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'bad', decision: 'approved', included: ['employeeCount'], values: { employeeCount: 'many' } });
    const refused = await ext.next<'decision.result'>((m) => m.type === 'decision.result' && m.elicitationId === id);
    expect(refused).toMatchObject({ ok: false, reason: 'invalid', status: 'pending' });
    expect(refused.issues?.[0]?.path).toBe('values.employeeCount');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    const pending = await agent.callTool('elicit_result', { elicitationId: id });
    expect(pending.isError).toBe(true);
    expect(json(pending)).toMatchObject({ error: 'pending', hint: expect.stringContaining('elicit_await') });
  });

  it('the reviewer’s Cancel is fetchable as a rejected envelope, with the comment', async () => {
    const id = await create('elicit_proposal', structuredClone(northmarkProposal));
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'c1', decision: 'rejected', comment: 'wrong company' });
    await ext.next((m) => m.type === 'decision.result' && m.elicitationId === id);
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      decision: 'rejected',
      action: 'cancel',
      context: northmarkProposal.context,
      comment: 'wrong company',
    });
  });
});

describe('approvals', () => {
  it('form mode returns the filled fields', async () => {
    const id = await create('elicit_approval', {
      message: 'Release 1.2?',
      requestedSchema: { type: 'object', properties: { version: { type: 'string', default: '1.2.0' }, notes: { type: 'string' } }, required: ['version'] },
    });
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'f1', decision: 'approved', values: { version: '1.2.1', notes: 'ok' } });
    await ext.next((m) => m.type === 'decision.result' && m.elicitationId === id);
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      decision: 'approved',
      action: 'submit',
      context: null,
      values: { version: '1.2.1', notes: 'ok' },
    });
  });

  it('json mode renders the displayTemplate at creation and echoes context verbatim', async () => {
    const context = { recordId: 'A-17', amount: 1200 };
    const id = await create('elicit_approval', { message: 'Refund?', context, displayTemplate: '<b>Refund {{ context.amount }}</b> for {{ context.recordId }}' });
    const pushed = await ext.next<'request.created'>((m) => m.type === 'request.created' && m.request.elicitationId === id);
    expect(pushed.request.renderedTemplate).toBe('<b>Refund 1200</b> for A-17');
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'j1', decision: 'approved' });
    await ext.next((m) => m.type === 'decision.result' && m.elicitationId === id);
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      decision: 'approved',
      action: 'submit',
      context,
      values: {},
    });
  });

  it('a template that fails to parse is refused at creation', async () => {
    const result = await agent.callTool('elicit_approval', { message: 'x', context: {}, displayTemplate: '{% if %}' });
    expect(result.isError).toBe(true);
    expect(json(result).message).toMatch(/^displayTemplate: /);
  });

  it('expires, fails closed, and says so', async () => {
    const id = await create('elicit_approval', { message: 'Quick one', context: { a: 1 }, timeoutSeconds: 1 });
    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 5 })).structuredContent).toEqual({ status: 'expired' });
    expect(json(await agent.callTool('elicit_result', { elicitationId: id }))).toMatchObject({ error: 'expired' });
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'late', decision: 'approved' });
    expect(await ext.next((m) => m.type === 'decision.result' && m.elicitationId === id)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('withdrawal: elicit_cancel, then the reviewer hears it was withdrawn', async () => {
    const id = await create('elicit_approval', { message: 'Withdraw me', context: { a: 1 } });
    expect((await agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    expect(await ext.next((m) => m.type === 'request.removed' && m.elicitationId === id)).toMatchObject({ status: 'canceled' });
    expect(json(await agent.callTool('elicit_result', { elicitationId: id }))).toMatchObject({ error: 'canceled' });
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'w', decision: 'approved' });
    expect(await ext.next((m) => m.type === 'decision.result' && m.elicitationId === id)).toMatchObject({ ok: false, reason: 'withdrawn' });
  });

  it('a cancel racing a decision: whichever is recorded first wins, the other gets a clear answer', async () => {
    const id = await create('elicit_approval', { message: 'Race', context: { a: 1 } });
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'race', decision: 'approved' });
    const cancel = await agent.callTool('elicit_cancel', { elicitationId: id });
    const decision = await ext.next<'decision.result'>((m) => m.type === 'decision.result' && m.elicitationId === id);
    if (decision.ok) {
      expect(cancel.isError).toBe(true);
      expect(json(cancel)).toMatchObject({ error: 'already_decided' });
    } else {
      expect(cancel.structuredContent).toEqual({ status: 'canceled' });
      expect(decision.reason).toBe('withdrawn');
    }
    // A repeat of the same decision gets the winning outcome back.
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'race', decision: 'approved' });
    const repeat = await ext.next<'decision.result'>((m) => m.type === 'decision.result' && m.elicitationId === id);
    expect(repeat.ok).toBe(decision.ok);
  });

  it('a reconnecting extension gets every pending request in its welcome', async () => {
    const id = await create('elicit_approval', { message: 'Still here?', context: { a: 1 } });
    const again = await ScriptedExtension.connect(port, { hello: false });
    again.send({ type: 'hello', protocol: 1, role: 'extension', client: { name: 'again', version: '1' } });
    const welcome = await again.next<'welcome'>((m) => m.type === 'welcome');
    expect(welcome.pending.map((r) => r.elicitationId)).toContain(id);
    again.close();
  });
});
