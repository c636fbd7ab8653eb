import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { northmarkProposal } from '../fixtures/northmark.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

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
  ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
});

afterAll(async () => {
  ext?.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the NorthMark proposal (seed 004) end to end', () => {
  it('delivers the request, wakes elicit_await on the decision, and returns only the included fields', async () => {
    const id = await create('elicit_proposal', structuredClone(northmarkProposal));
    const pushed = await ext.notice('request.created');
    expect(pushed.request).toMatchObject({ elicitationId: id, kind: 'proposal', status: 'pending', message: northmarkProposal.message });
    expect(pushed.request.request).toMatchObject({ columns: northmarkProposal.columns, fields: northmarkProposal.fields });

    const waiting = agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 30 });
    // The server reads stdin in order, and the await parks its waiter without I/O: once a later call is answered, the
    // await is waiting, so the decision below wakes it rather than being read before it.
    expect(json(await agent.callTool('elicit_status', { elicitationId: id }))).toMatchObject({ status: 'pending' });
    const decidedAt = Date.now();
    const decided = await ext.call('decide', {
      elicitationId: id,
      idempotencyKey: 'k-northmark',
      decision: 'approved',
      included: ['name', 'website', 'employeeCount'],
      values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 230 },
    });
    expect(decided).toEqual({ id: expect.any(String), result: { ok: true, status: 'approved' } });
    expect((await waiting).structuredContent).toEqual({ status: 'approved' });
    expect(Date.now() - decidedAt).toBeLessThan(1000);

    const expected = {
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
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
    const refused = await ext.call('decide', { elicitationId: id, idempotencyKey: 'bad', decision: 'approved', included: ['employeeCount'], values: { employeeCount: 'many' } });
    expect(refused).toMatchObject({ result: { ok: false, reason: 'invalid', status: 'pending' } });
    expect(refused.result?.issues?.[0]?.path).toBe('values.employeeCount');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    const pending = await agent.callTool('elicit_result', { elicitationId: id });
    expect(pending.isError).toBe(true);
    expect(json(pending)).toMatchObject({ error: 'pending', hint: expect.stringContaining('elicit_await') });
  });

  it('the reviewer’s Cancel is fetchable as a rejected envelope, with the comment', async () => {
    const id = await create('elicit_proposal', structuredClone(northmarkProposal));
    expect(await ext.call('decide', { elicitationId: id, idempotencyKey: 'c1', decision: 'rejected', comment: 'wrong company' })).toMatchObject({ result: { ok: true, status: 'rejected' } });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'rejected',
      action: 'cancel',
      decidedVia: 'extension',
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
    expect(await ext.call('decide', { elicitationId: id, idempotencyKey: 'f1', decision: 'approved', values: { version: '1.2.1', notes: 'ok' } })).toMatchObject({ result: { ok: true } });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: null,
      values: { version: '1.2.1', notes: 'ok' },
    });
  });

  it('json mode renders the displayTemplate at creation and echoes context verbatim', async () => {
    const context = { recordId: 'A-17', amount: 1200 };
    const id = await create('elicit_approval', { message: 'Refund?', context, displayTemplate: '<b>Refund {{ context.amount }}</b> for {{ context.recordId }}' });
    const pushed = await ext.notice('request.created', (p) => p.request.elicitationId === id);
    expect(pushed.request.renderedTemplate).toBe('<b>Refund 1200</b> for A-17');
    expect(await ext.call('decide', { elicitationId: id, idempotencyKey: 'j1', decision: 'approved' })).toMatchObject({ result: { ok: true } });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context,
      values: {},
    });
  });

  it('a template that fails to parse is refused at creation', async () => {
    const result = await agent.callTool('elicit_approval', { message: 'x', context: {}, displayTemplate: '{% if %}' });
    expect(result.isError).toBe(true);
    expect(json(result).message).toMatch(/^displayTemplate: /);
  });

  it('finding 6: a template that runs past the limit inside one filter is refused as too_slow while the server keeps answering', async () => {
    // The bundled worker is started by a first template, so its start-up is not the hostile one's time.
    await create('elicit_approval', { message: 'warm', context: {}, displayTemplate: 'warm' });
    const began = Date.now();
    const hostile = agent.callTool('elicit_approval', { message: 'x', context: {}, displayTemplate: '{% assign r = (1..2090000) %}{{ r | sort: "x" | first }}' });
    // Two calls sent while the template renders, both answered at once: the render does not hold the server's event
    // loop (before the fix a call waited 2.2 s for the sort to finish). The render cannot be watched from here, but
    // stdin is one ordered stream: the first call is read with or after the hostile one, so it waits for a sort that
    // began before it, or it is answered before the sort and the second, sent after that answer, waits instead.
    const asked = Date.now();
    expect(json(await agent.callTool('elicit_status', { elicitationId: 'el_none' }))).toMatchObject({ error: 'not_found' });
    expect(json(await agent.callTool('elicit_status', { elicitationId: 'el_none' }))).toMatchObject({ error: 'not_found' });
    expect(Date.now() - asked).toBeLessThan(500);
    const result = await hostile;
    expect(Date.now() - began).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(json(result)).toMatchObject({ message: expect.stringMatching(/^displayTemplate: .*longer than 1000 ms/), issues: [{ path: 'displayTemplate', rule: 'too_slow' }] });
    expect(json(await agent.callTool('elicit_approval', { message: 'x', context: {}, displayTemplate: '{{ context | find_exp: "x", "x" }}' }))).toMatchObject({ issues: [{ path: 'displayTemplate', rule: 'filter_refused' }] });
  });

  it('expires, fails closed, and says so', async () => {
    const id = await create('elicit_approval', { message: 'Quick one', context: { a: 1 }, timeoutSeconds: 1 });
    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 5 })).structuredContent).toEqual({ status: 'expired' });
    expect(json(await agent.callTool('elicit_result', { elicitationId: id }))).toMatchObject({ error: 'expired' });
    expect(await ext.call('decide', { elicitationId: id, idempotencyKey: 'late', decision: 'approved' })).toMatchObject({ result: { ok: false, reason: 'expired' } });
  });

  it('withdrawal: elicit_cancel, then the reviewer hears it was withdrawn', async () => {
    const id = await create('elicit_approval', { message: 'Withdraw me', context: { a: 1 } });
    expect((await agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    expect(await ext.notice('request.removed', (p) => p.elicitationId === id)).toMatchObject({ status: 'canceled' });
    expect(json(await agent.callTool('elicit_result', { elicitationId: id }))).toMatchObject({ error: 'canceled' });
    expect(await ext.call('decide', { elicitationId: id, idempotencyKey: 'w', decision: 'approved' })).toMatchObject({ result: { ok: false, reason: 'withdrawn' } });
  });

  it('a cancel racing a decision: whichever is recorded first wins, the other gets a clear answer', async () => {
    const id = await create('elicit_approval', { message: 'Race', context: { a: 1 } });
    // Sent before the cancel, answered whenever the hub records it.
    const deciding = ext.call('decide', { elicitationId: id, idempotencyKey: 'race', decision: 'approved' });
    const cancel = await agent.callTool('elicit_cancel', { elicitationId: id });
    const answer = await deciding;
    if (!answer.result) throw new Error(`the decide was not answered with a result: ${JSON.stringify(answer.error)}`);
    const decision = answer.result;
    if (decision.ok) {
      expect(cancel.isError).toBe(true);
      expect(json(cancel)).toMatchObject({ error: 'already_decided' });
    } else {
      expect(cancel.structuredContent).toEqual({ status: 'canceled' });
      expect(decision.reason).toBe('withdrawn');
    }
    // A repeat of the same decision gets the winning outcome back.
    const repeat = await ext.call('decide', { elicitationId: id, idempotencyKey: 'race', decision: 'approved' });
    expect(repeat.result?.ok).toBe(decision.ok);
  });

  it('a reconnecting extension gets every pending request in its welcome', async () => {
    const id = await create('elicit_approval', { message: 'Still here?', context: { a: 1 } });
    const again = await ScriptedExtension.connect(port, { hello: false, key: pairedKey(dir) });
    const welcome = await again.handshake();
    expect(welcome.pending.map((r) => r.elicitationId)).toContain(id);
    again.close();
  });
});

describe('invalid tool inputs are refused with the field named', () => {
  const nm = (): Record<string, unknown> => structuredClone(northmarkProposal);
  const withField = (mutate: (p: Record<string, unknown> & { fields: Record<string, Record<string, unknown>> }) => void) => {
    const p = nm() as Record<string, unknown> & { fields: Record<string, Record<string, unknown>> };
    mutate(p);
    return p;
  };
  const rows: [string, string, Record<string, unknown>, string][] = [
    ['proposal: fields key not in the schema', 'elicit_proposal', withField((p) => (p.fields.phone = { current: null })), 'fields.phone'],
    ['proposal: undeclared source', 'elicit_proposal', withField((p) => (p.fields.name!.sources = { zoominfo: 'x' })), 'fields.name.sources.zoominfo'],
    ['proposal: include not boolean', 'elicit_proposal', withField((p) => (p.fields.name!.include = 'yes')), 'include'],
    ['proposal: default of the wrong type', 'elicit_proposal', { ...nm(), requestedSchema: { type: 'object', properties: { n: { type: 'integer', default: 'x' } } }, fields: {} }, 'requestedSchema.properties.n.default'],
    ['proposal: no sources', 'elicit_proposal', { ...nm(), columns: { sources: [], current: { label: 'SF' } } }, 'columns.sources'],
    ['proposal: duplicate source key', 'elicit_proposal', { ...nm(), columns: { sources: [{ key: 'a', label: 'A' }, { key: 'a', label: 'B' }], current: { label: 'SF' } }, fields: {} }, 'columns.sources[1].key'],
    ['proposal: missing current label', 'elicit_proposal', { ...nm(), columns: { sources: [{ key: 'apollo', label: 'Apollo' }] } }, 'columns.current'],
    ['proposal: missing message', 'elicit_proposal', { ...nm(), message: undefined }, 'message'],
    ['proposal: empty message', 'elicit_proposal', { ...nm(), message: '  ' }, 'message'],
    ['proposal: label too long', 'elicit_proposal', { ...nm(), labels: { ok: 'x'.repeat(41) } }, 'labels.ok'],
    ['proposal: empty cancel label', 'elicit_proposal', { ...nm(), labels: { cancel: '' } }, 'labels.cancel'],
    ['proposal: unknown key', 'elicit_proposal', { ...nm(), colour: 'red' }, 'colour'],
    ['proposal: timeoutSeconds a string', 'elicit_proposal', { ...nm(), timeoutSeconds: 'soon' }, 'timeoutSeconds'],
    ['proposal: template too large', 'elicit_proposal', { ...nm(), displayTemplate: 'x'.repeat(16 * 1024 + 1) }, 'displayTemplate'],
    ['proposal: context too large', 'elicit_proposal', { ...nm(), context: { blob: 'x'.repeat(64 * 1024) } }, 'context'],
    ['proposal: nested object property', 'elicit_proposal', { ...nm(), requestedSchema: { type: 'object', properties: { a: { type: 'object' } } }, fields: {} }, 'requestedSchema.properties.a'],
    ['proposal: fields not an object', 'elicit_proposal', { ...nm(), fields: [] }, 'fields'],
    ['approval: neither context nor schema', 'elicit_approval', { message: 'x' }, 'context'],
    ['approval: missing message', 'elicit_approval', { context: {} }, 'message'],
    ['approval: bad schema format', 'elicit_approval', { message: 'x', requestedSchema: { type: 'object', properties: { a: { type: 'string', format: 'phone' } } } }, 'requestedSchema.properties.a.format'],
    ['approval: required names a missing key', 'elicit_approval', { message: 'x', requestedSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] } }, 'requestedSchema.required'],
    ['approval: label too long', 'elicit_approval', { message: 'x', context: {}, labels: { ok: 'y'.repeat(41) } }, 'labels.ok'],
    ['approval: unknown key', 'elicit_approval', { message: 'x', context: {}, mode: 'json' }, 'mode'],
    ['approval: template not a string', 'elicit_approval', { message: 'x', context: {}, displayTemplate: 5 }, 'displayTemplate'],
    ['approval: request over 512 KB', 'elicit_approval', { message: 'x', requestedSchema: { type: 'object', properties: { a: { type: 'string', description: 'd'.repeat(600 * 1024) } } } }, 'requestedSchema'],
    ['status: missing id', 'elicit_status', {}, 'elicitationId'],
    ['status: empty id', 'elicit_status', { elicitationId: '' }, 'elicitationId'],
    ['await: waitSeconds a string', 'elicit_await', { elicitationId: 'el_x', waitSeconds: 'long' }, 'waitSeconds'],
    ['await: unknown key', 'elicit_await', { elicitationId: 'el_x', timeout: 5 }, 'timeout'],
    ['result: id a number', 'elicit_result', { elicitationId: 42 }, 'elicitationId'],
    ['cancel: missing id', 'elicit_cancel', {}, 'elicitationId'],
    ['cancel: unknown id', 'elicit_cancel', { elicitationId: 'el_unknown' }, 'el_unknown'],
  ];
  it.each(rows)('%s', async (_name, tool, args, field) => {
    const result = await agent.callTool(tool, args);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(field);
  });
});
