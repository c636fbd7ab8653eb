// elicit_confirm, elicit_form and elicit_selection reach the person wherever they can answer: the host's dialog when it
// really shows one, the extension (here a scripted one speaking the real wire protocol to the real hub) otherwise.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClientKind, Harness, HarnessOptions } from '../helpers/mcp-harness.js';
import { CLIENT_KINDS, connect, hosts } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';
import { ScriptedExtension, pairedKey } from '../helpers/scripted-extension.js';
import type { HubNotice, Result } from '../../shared/peer-calls.js';

type Created = Extract<HubNotice, { method: 'request.created' }>['params'];

/** A server with the given host, its hub started, and a paired extension connected to it. */
async function serverWithExtension(kind: ClientKind, options: HarnessOptions = {}): Promise<{ agent: Harness; ext: ScriptedExtension }> {
  const agent = await connect(kind, { inProcess: true, ...options, env: { ELICITLY_MIN_TIMEOUT_SECONDS: '1', ...options.env } });
  // Any approval call makes this process the hub.
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
  const ext = await ScriptedExtension.connect(agent.port, { key: pairedKey(agent.stateDir) });
  return { agent, ext };
}

const created = (ext: ScriptedExtension, message: string): Promise<Created> => ext.notice('request.created', (p) => p.request.message === message, 10_000);

let keys = 0;
/** The extension's decision: the `decide` call's result (the domain answer); an error answer fails the test. */
async function decide(ext: ScriptedExtension, request: Created, decision: 'approved' | 'rejected', values?: Record<string, unknown>): Promise<Result<'decide'>> {
  const { elicitationId } = request.request;
  const answer = await ext.call('decide', { elicitationId, idempotencyKey: `k-${++keys}`, decision, ...(values ? { values } : {}) });
  if (!answer.result) throw new Error(`the hub refused the decide: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

const releaseSchema = {
  type: 'object',
  properties: {
    version: { type: 'string', title: 'Version', minLength: 1 },
    prerelease: { type: 'boolean', default: false },
  },
  required: ['version'],
};
const regions = [
  { value: 'eu', label: 'Europe', description: 'Frankfurt and Dublin' },
  { value: 'us', label: 'United States' },
  { value: 'ap', label: 'Asia Pacific' },
];

describe.each(CLIENT_KINDS)('the %s client advertises no elicitation', (kind) => {
  let agent: Harness;
  beforeAll(async () => {
    agent = await connect(kind, { inProcess: true, capabilities: {}, env: { ELICITLY_MIN_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(() => agent.close());

  it('issue 18 item 8: with no extension ever paired, the seed\'s error shape with the reason and what to do; nothing is filed', async () => {
    const confirm = await agent.callTool('elicit_confirm', { question: 'Ship it?' });
    expect(confirm.isError).toBeFalsy();
    expect(confirm.structuredContent).toEqual({
      confirmed: null,
      question: 'Ship it?',
      error: expect.stringMatching(/^nobody can answer this question here: the host did not advertise form elicitation.*no Elicitly browser extension is paired/),
      next: expect.stringContaining('`npx elicitly-companion pair`'),
    });
    const form = await agent.callTool('elicit_form', { message: 'Release details', requestedSchema: releaseSchema });
    expect(form.structuredContent).toEqual({ action: 'error', content: null, error: expect.stringContaining('no Elicitly browser extension is paired'), next: expect.any(String) });
    const selection = await agent.callTool('elicit_selection', { message: 'Which region?', options: regions });
    expect(selection.structuredContent).toEqual({ action: 'error', selected: null, error: expect.stringContaining('no Elicitly browser extension is paired'), next: expect.any(String) });
    // The hub is up (an extension can pair with it now) and holds no request: nothing could have answered one.
    const doctor = await agent.callTool('elicit_doctor', {});
    expect((doctor.structuredContent as { companion: unknown }).companion).toMatchObject({ hub: { role: 'hub' }, pending: 0 });
    // Forced to the extension, the ask is still filed: the caller asked for exactly that.
    const forced = await agent.callTool('elicit_confirm', { question: 'Forced?', via: 'extension' });
    expect(forced.structuredContent).toMatchObject({ action: 'pending', reviewer: { connected: false }, next: expect.stringContaining('pair') });
    await agent.callTool('elicit_cancel', { elicitationId: (forced.structuredContent as { elicitationId: string }).elicitationId });
  });

  it('says at once that nobody can answer yet, and how to connect the extension', async () => {
    // Paired once, not connected now: the ask is filed and waits for it.
    pairedKey(agent.stateDir);
    const began = Date.now();
    const result = await agent.callTool('elicit_confirm', { question: 'Ship it?' });
    const out = result.structuredContent as Record<string, unknown>;
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({
      confirmed: null,
      question: 'Ship it?',
      action: 'pending',
      via: 'extension',
      elicitationId: expect.stringMatching(/^el_/),
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      reviewer: { connected: false },
    });
    expect(String(out.next)).toMatch(/extension/);
    expect(String(out.next)).toMatch(/pair/);
    // No waiting for a reviewer who is not there.
    expect(Date.now() - began).toBeLessThan(5000);
    expect((await agent.callTool('elicit_status', { elicitationId: out.elicitationId })).structuredContent).toEqual({ status: 'pending' });
  });

  describe('with the extension connected', () => {
    let ext: ScriptedExtension;
    beforeAll(async () => {
      // The hub is up already when the test above ran; this makes sure of it when it was filtered out.
      await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
      ext = await ScriptedExtension.connect(agent.port, { key: pairedKey(agent.stateDir) });
    });
    afterAll(() => ext?.close());

    it('a confirm with localized labels is answered there, in the seed shape', async () => {
      const call = agent.callTool('elicit_confirm', { question: '¿Publicar la versión 2?', yesLabel: 'Sí', noLabel: 'No' });
      const shown = await created(ext, '¿Publicar la versión 2?');
      expect(shown.request).toMatchObject({ kind: 'confirm', status: 'pending', requester: { client: `test-host-${kind}` } });
      expect(shown.request.request).toMatchObject({ kind: 'confirm', labels: { yes: 'Sí', no: 'No' } });
      expect(await decide(ext, shown, 'approved', { confirmed: true })).toMatchObject({ ok: true, status: 'approved' });
      expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
    });

    it('"no" in the extension is confirmed false; a rejection is a decline', async () => {
      const saidNo = agent.callTool('elicit_confirm', { question: 'Delete the branch?' });
      await decide(ext, await created(ext, 'Delete the branch?'), 'approved', { confirmed: false });
      expect((await saidNo).structuredContent).toEqual({ confirmed: false, action: 'accept', via: 'extension' });
      const dismissed = agent.callTool('elicit_confirm', { question: 'Force-push?' });
      await decide(ext, await created(ext, 'Force-push?'), 'rejected');
      expect((await dismissed).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'extension' });
    });

    it('refuses an answer that is not a yes or a no, naming the field, and keeps the ask open', async () => {
      const call = agent.callTool('elicit_confirm', { question: 'Rotate the keys?' });
      const shown = await created(ext, 'Rotate the keys?');
      const refused = await decide(ext, shown, 'approved', { confirmed: 'yes' });
      expect(refused).toMatchObject({ ok: false, reason: 'invalid', status: 'pending' });
      expect(refused.issues?.[0]?.path).toBe('values.confirmed');
      await decide(ext, shown, 'approved', { confirmed: true });
      expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
    });

    it('a form is answered there and its values are checked against the schema', async () => {
      const call = agent.callTool('elicit_form', { message: 'Release details', requestedSchema: releaseSchema });
      const shown = await created(ext, 'Release details');
      expect(shown.request.request).toMatchObject({ kind: 'form', requestedSchema: { properties: { version: { type: 'string' } } } });
      const refused = await decide(ext, shown, 'approved', { version: '', prerelease: false });
      expect(refused.ok).toBe(false);
      expect(refused.issues?.[0]?.path).toBe('values.version');
      await decide(ext, shown, 'approved', { version: '2.0.0', prerelease: true });
      expect((await call).structuredContent).toEqual({ action: 'accept', content: { version: '2.0.0', prerelease: true }, via: 'extension' });
    });

    it('a declined form has content null', async () => {
      const call = agent.callTool('elicit_form', { message: 'Release notes?', requestedSchema: releaseSchema });
      await decide(ext, await created(ext, 'Release notes?'), 'rejected');
      expect((await call).structuredContent).toEqual({ action: 'decline', content: null, via: 'extension' });
    });

    it('a selection is answered there, within its bounds', async () => {
      const call = agent.callTool('elicit_selection', { message: 'Deploy to which regions?', options: regions, multiple: true, minSelected: 1, maxSelected: 2 });
      const shown = await created(ext, 'Deploy to which regions?');
      expect(shown.request.request).toMatchObject({ kind: 'selection', multiple: true, minSelected: 1, maxSelected: 2, options: regions });
      const tooMany = await decide(ext, shown, 'approved', { selected: ['eu', 'us', 'ap'] });
      expect(tooMany).toMatchObject({ ok: false, issues: [{ path: 'values.selected', rule: 'too_many' }] });
      const unknown = await decide(ext, shown, 'approved', { selected: ['mars'] });
      expect(unknown).toMatchObject({ ok: false, issues: [{ path: 'values.selected[0]', rule: 'not_an_option' }] });
      await decide(ext, shown, 'approved', { selected: ['ap', 'eu'] });
      expect((await call).structuredContent).toEqual({ action: 'accept', selected: ['ap', 'eu'], via: 'extension' });
    });

    it('a single selection answers one element', async () => {
      const call = agent.callTool('elicit_selection', { message: 'Primary region?', options: regions, default: ['us'] });
      const shown = await created(ext, 'Primary region?');
      expect(shown.request.request).toMatchObject({ multiple: false, minSelected: 1, maxSelected: 1, default: ['us'] });
      await decide(ext, shown, 'approved', { selected: ['eu'] });
      expect((await call).structuredContent).toEqual({ action: 'accept', selected: ['eu'], via: 'extension' });
    });

    it("the public product's confirm shape (message, labels) is shown with its labels and answered in the seed shape", async () => {
      const call = agent.callTool('elicit_confirm', { message: 'Merge the PR?', labels: { ok: 'Merge', cancel: 'Not yet' } });
      const shown = await created(ext, 'Merge the PR?');
      expect(shown.request.request).toMatchObject({ kind: 'confirm', labels: { yes: 'Merge', no: 'Not yet' } });
      await decide(ext, shown, 'approved', { confirmed: true });
      expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
    });

    it('forcing the host dialog on this host is an error in the seed shape, and nothing reaches the extension', async () => {
      const result = await agent.callTool('elicit_confirm', { question: 'Via host?', via: 'host' });
      expect(result.structuredContent).toEqual({ confirmed: null, question: 'Via host?', error: 'client did not advertise elicitation', via: 'host' });
      const call = agent.callTool('elicit_confirm', { question: 'Via auto?' });
      // The first request the extension sees after the forced call is this one.
      const next = await ext.notice('request.created', () => true, 10_000);
      expect(next.request.message).toBe('Via auto?');
      await decide(ext, next, 'approved', { confirmed: true });
      expect((await call).structuredContent).toMatchObject({ via: 'extension' });
    });
  });
});

describe.each(CLIENT_KINDS)('the %s client advertises elicitation but declines in 5 ms', (kind) => {
  let agent: Harness;
  let ext: ScriptedExtension;
  beforeAll(async () => {
    ({ agent, ext } = await serverWithExtension(kind, { host: hosts.answerAfter(5, 'decline') }));
  });
  afterAll(async () => {
    ext?.close();
    await agent?.close();
  });

  it('the same confirm call goes on to the extension, and later asks go there directly', async () => {
    const call = agent.callTool('elicit_confirm', { question: 'Tag the release?' });
    await decide(ext, await created(ext, 'Tag the release?'), 'approved', { confirmed: true });
    expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
    expect(agent.elicitations).toHaveLength(1);

    const form = agent.callTool('elicit_form', { message: 'Which version?', requestedSchema: releaseSchema });
    await decide(ext, await created(ext, 'Which version?'), 'approved', { version: '3.1.0' });
    expect((await form).structuredContent).toEqual({ action: 'accept', content: { version: '3.1.0' }, via: 'extension' });
    // The session remembers: the dialog was not tried again.
    expect(agent.elicitations).toHaveLength(1);
  });

  it('via "host" still asks the host, and reports its decline as the answer', async () => {
    const before = agent.elicitations.length;
    expect((await agent.callTool('elicit_confirm', { question: 'Forced?', via: 'host' })).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'host' });
    expect(agent.elicitations).toHaveLength(before + 1);
  });
});

describe('a host whose dialog works (v2-2025)', () => {
  let agent: Harness;
  let ext: ScriptedExtension;
  beforeAll(async () => {
    ({ agent, ext } = await serverWithExtension('v2-2025', {
      host: async (params) => {
        const property = Object.keys((params.requestedSchema.properties ?? {}) as object)[0] ?? 'answer';
        if (property === 'selection') return { action: 'accept', content: { selection: params.message.includes('several') ? ['us', 'eu'] : 'us' } };
        if (property === 'answer') return { action: 'accept', content: { answer: 'yes' } };
        return { action: 'accept', content: { version: '1.0.0' } };
      },
    }));
  });
  afterAll(async () => {
    ext?.close();
    await agent?.close();
  });

  it('auto asks go to the host and nothing reaches the extension; via "extension" forces it', async () => {
    expect((await agent.callTool('elicit_confirm', { question: 'Host one?' })).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'host' });
    expect((await agent.callTool('elicit_form', { message: 'Host form?', requestedSchema: releaseSchema })).structuredContent).toEqual({
      action: 'accept',
      content: { version: '1.0.0' },
      via: 'host',
    });
    expect(agent.elicitations).toHaveLength(2);

    const forced = agent.callTool('elicit_confirm', { question: 'Extension one?', via: 'extension' });
    // The first request the extension ever sees is the forced one.
    const first = await ext.notice('request.created', () => true, 10_000);
    expect(first.request.message).toBe('Extension one?');
    await decide(ext, first, 'approved', { confirmed: false });
    expect((await forced).structuredContent).toEqual({ confirmed: false, action: 'accept', via: 'extension' });
    expect(agent.elicitations).toHaveLength(2);
  });

  it('a single selection is shown as a titled oneOf and read back as one element', async () => {
    const before = agent.elicitations.length;
    const result = await agent.callTool('elicit_selection', { message: 'Pick a region', options: regions, default: ['eu'] });
    expect(result.structuredContent).toEqual({ action: 'accept', selected: ['us'], via: 'host' });
    expect(agent.elicitations[before]?.requestedSchema).toEqual({
      type: 'object',
      properties: {
        selection: {
          type: 'string',
          title: 'Choose one',
          oneOf: [
            { const: 'eu', title: 'Europe' },
            { const: 'us', title: 'United States' },
            { const: 'ap', title: 'Asia Pacific' },
          ],
          default: 'eu',
        },
      },
      required: ['selection'],
    });
  });

  it('a multiple selection is shown as an array of anyOf with its bounds', async () => {
    const before = agent.elicitations.length;
    const result = await agent.callTool('elicit_selection', { message: 'Pick several regions', options: regions, multiple: true, maxSelected: 2 });
    expect(result.structuredContent).toEqual({ action: 'accept', selected: ['us', 'eu'], via: 'host' });
    expect(agent.elicitations[before]?.requestedSchema).toMatchObject({
      properties: { selection: { type: 'array', items: { anyOf: [{ const: 'eu', title: 'Europe' }, { const: 'us' }, { const: 'ap' }] }, minItems: 0, maxItems: 2 } },
    });
  });

  it("the public product's confirm shape is shown by the host with its labels", async () => {
    const before = agent.elicitations.length;
    const result = await agent.callTool('elicit_confirm', { message: 'Publish?', labels: { ok: 'Publish', cancel: 'Keep draft' } });
    expect(result.structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'host' });
    expect(agent.elicitations[before]).toMatchObject({
      message: 'Publish?',
      requestedSchema: { properties: { answer: { oneOf: [{ const: 'yes', title: 'Publish' }, { const: 'no', title: 'Keep draft' }] } } },
    });
  });

  it.each([
    ['duplicate values', { message: 'm', options: [{ value: 'a' }, { value: 'a' }] }, 'options[1].value'],
    ['empty options', { message: 'm', options: [] }, 'options'],
    ['min > max', { message: 'm', options: regions, multiple: true, minSelected: 3, maxSelected: 2 }, 'minSelected'],
    ['a default that is no option', { message: 'm', options: regions, default: ['mars'] }, 'default[0]'],
  ])('elicit_selection refuses %s before anything is shown, naming the field', async (_name, args, field) => {
    const before = agent.elicitations.length;
    const result = await agent.callTool('elicit_selection', args);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(field);
    expect(agent.elicitations).toHaveLength(before);
  });

  it.each([
    ['question with labels', { question: 'q', labels: { ok: 'Go' } }, 'labels'],
    ['message with yesLabel', { message: 'q', yesLabel: 'Go' }, 'yesLabel'],
    ['message with noLabel', { message: 'q', noLabel: 'Stop' }, 'noLabel'],
    ['an unknown key in labels', { message: 'q', labels: { yes: 'Go' } }, 'labels'],
    ['a 41-character labels.ok', { message: 'q', labels: { ok: 'x'.repeat(41) } }, 'labels.ok'],
  ])('refuses %s, naming the field', async (_name, args, field) => {
    const before = agent.elicitations.length;
    const result = await agent.callTool('elicit_confirm', args);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(field);
    expect(agent.elicitations).toHaveLength(before);
  });
});

describe('an extension-routed ask the person has not answered yet (v2-2025, no elicitation)', () => {
  let agent: Harness;
  let ext: ScriptedExtension;
  beforeAll(async () => {
    ({ agent, ext } = await serverWithExtension('v2-2025', { capabilities: {} }));
  });
  afterAll(async () => {
    ext?.close();
    await agent?.close();
  });

  it('returns pending after waitSeconds; elicit_await and elicit_result then give the confirm shape', async () => {
    const began = Date.now();
    const result = await agent.callTool('elicit_confirm', { question: 'Later?', waitSeconds: 1 });
    const out = result.structuredContent as { elicitationId: string; next: string };
    expect(out).toMatchObject({ confirmed: null, question: 'Later?', action: 'pending', via: 'extension', reviewer: { connected: true } });
    expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
    expect(out.next).toContain('elicit_await');
    expect(out.next).toContain(out.elicitationId);
    expect((await agent.callTool('elicit_result', { elicitationId: out.elicitationId })).isError).toBe(true);

    const shown = await created(ext, 'Later?');
    expect(shown.request.elicitationId).toBe(out.elicitationId);
    const waiting = agent.callTool('elicit_await', { elicitationId: out.elicitationId, waitSeconds: 20 });
    await decide(ext, shown, 'approved', { confirmed: true });
    expect((await waiting).structuredContent).toEqual({ status: 'approved' });
    const expected = { confirmed: true, action: 'accept', via: 'extension' };
    expect((await agent.callTool('elicit_result', { elicitationId: out.elicitationId })).structuredContent).toEqual(expected);
    expect((await agent.callTool('elicit_result', { elicitationId: out.elicitationId })).structuredContent).toEqual(expected);
    expect((await agent.callTool('elicit_status', { elicitationId: out.elicitationId })).structuredContent).toEqual({ status: 'consumed' });
  });

  it('a selection read later with elicit_result has the selection shape', async () => {
    const result = await agent.callTool('elicit_selection', { message: 'Later, which?', options: regions, waitSeconds: 1 });
    const { elicitationId } = result.structuredContent as { elicitationId: string };
    expect(result.structuredContent).toMatchObject({ action: 'pending', selected: null });
    await decide(ext, await created(ext, 'Later, which?'), 'approved', { selected: ['ap'] });
    expect((await agent.callTool('elicit_result', { elicitationId })).structuredContent).toEqual({ action: 'accept', selected: ['ap'], via: 'extension' });
  });

  it('an ask that expires unanswered returns the unanswered shape', async () => {
    const result = await agent.callTool('elicit_confirm', { question: 'Quick one?', timeoutSeconds: 1, waitSeconds: 10 });
    expect(result.structuredContent).toEqual({ confirmed: null, action: 'cancel', question: 'Quick one?', via: 'extension' });
  });

  it('sends progress while it waits, when the call has a progressToken', async () => {
    // The server runs in this process: its progress interval (5 s) runs on a fake clock the test advances, instead of
    // being waited out. Only intervals are faked; the sockets' and the SDK's timeouts stay real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'], shouldClearNativeTimers: true });
    try {
      const ticks: unknown[] = [];
      const call = agent.callTool('elicit_confirm', { question: 'Progress?' }, { onprogress: (p) => ticks.push(p) });
      const shown = await created(ext, 'Progress?');
      // The interval starts once the ask is filed, about when the extension hears of it: advanced until a tick arrives.
      await until('a progress tick', () => (vi.advanceTimersToNextTimer(), ticks[0]), 8000);
      await decide(ext, shown, 'approved', { confirmed: true });
      expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
      expect(ticks[0]).toMatchObject({ progress: 1, message: expect.stringContaining('Elicitly extension') });
    } finally {
      vi.useRealTimers();
    }
  });

  it('withdraws the ask when the host cancels the call, since nobody could read its answer', async () => {
    const controller = new AbortController();
    const call = agent.callTool('elicit_confirm', { question: 'Abandoned?' }, { signal: controller.signal });
    const shown = await created(ext, 'Abandoned?');
    controller.abort();
    await expect(call).rejects.toThrow();
    const withdrawn = await ext.notice('request.removed', (p) => p.elicitationId === shown.request.elicitationId);
    expect(withdrawn).toMatchObject({ status: 'canceled' });
    expect((await agent.callTool('elicit_status', { elicitationId: shown.request.elicitationId })).structuredContent).toEqual({ status: 'canceled' });
  });
});

describe('an ask is held to the request size cap of every kind', () => {
  let agent: Harness;
  beforeAll(async () => {
    agent = await connect('v2-2025', { inProcess: true, capabilities: {}, env: { ELICITLY_MIN_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(() => agent.close());

  it('finding 7: an 8 MB elicit_form is refused before it reaches the hub, naming the field and the rule', async () => {
    const requestedSchema = { type: 'object', properties: { v: { type: 'string', description: 'x'.repeat(8 * 1024 * 1024) } } };
    const result = await agent.callTool('elicit_form', { message: 'Release?', requestedSchema, via: 'extension' }, { timeoutMs: 30_000 });
    expect(result.isError).toBe(true);
    const body = JSON.parse((result.content?.[0] as { text: string }).text) as { error: string; issues: { path: string; rule: string; message: string }[] };
    expect(body.error).toBe('invalid_arguments');
    expect(body.issues).toEqual([{ path: 'requestedSchema', rule: 'too_large', message: expect.stringMatching(/^requestedSchema: .*the limit is 524288 bytes$/) }]);
  }, 30_000);
});

describe.each(CLIENT_KINDS)('issue 18 item 2: a person declines in 300 ms (%s)', (kind) => {
  let agent: Harness;
  let ext: ScriptedExtension;
  beforeAll(async () => {
    ({ agent, ext } = await serverWithExtension(kind, { host: hosts.answerAfter(300, 'decline') }));
  });
  afterAll(async () => {
    ext?.close();
    await agent?.close();
  });

  it('the decline is the answer: not asked again in the extension, and the dialog is not marked broken', async () => {
    expect((await agent.callTool('elicit_confirm', { question: 'Publish now?', waitSeconds: 1 })).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'host' });
    expect((await agent.callTool('elicit_form', { message: 'Which version?', requestedSchema: releaseSchema, waitSeconds: 1 })).structuredContent).toEqual({
      action: 'decline',
      content: null,
      via: 'host',
    });
    expect(agent.elicitations).toHaveLength(2);
    const doctor = (await agent.callTool('elicit_doctor', {})).structuredContent as { routing: Record<string, { via: string }> };
    expect(doctor.routing.elicit_confirm?.via).toBe('host');
    expect(ext.notices('request.created')).toEqual([]);
  });
});

/** Claude Code 2.1.332's capabilities as measured (notes/claude-code.md): print mode, and interactive mode. */
const CLAUDE_CODE = { name: 'claude-code', version: '2.1.332' };
const PRINT_CAPS = { roots: { listChanged: true }, elicitation: { form: {}, url: {} } };
const INTERACTIVE_CAPS = { ...PRINT_CAPS, extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** Codex 0.171.0 as measured (evidence/known-hosts.md): exec and TUI send the same; only each call's _meta differs. */
const CODEX = { name: 'codex-mcp-client', version: '0.171.0' };
const CODEX_CAPS = { experimental: { 'codex/auth-change': {} }, elicitation: { form: {}, url: {} } };
const codexTurn = (trigger: 'exec' | 'user') => ({ 'x-codex-turn-metadata': { turn_trigger: trigger, sandbox_mode: 'read-only', codex_version: '0.171.0' } });

describe.each(CLIENT_KINDS)('issue 18 item 5: known hosts (%s)', (kind) => {
  const open: { agent: Harness; ext: ScriptedExtension }[] = [];
  afterAll(async () => {
    for (const { agent, ext } of open.splice(0)) {
      ext.close();
      await agent.close();
    }
  });
  async function known(options: HarnessOptions) {
    const pair = await serverWithExtension(kind, options);
    open.push(pair);
    return pair;
  }

  it(
    kind === 'v2-2026'
      ? 'Claude Code in print mode: an auto ask goes straight to the extension, the host is never asked'
      : 'Claude Code on the 2025 fallback looks the same in both modes: the dialog is tried, and its 5 ms cancel rerouted',
    async () => {
      const { agent, ext } = await known({ clientInfo: CLAUDE_CODE, capabilities: PRINT_CAPS, host: hosts.answerAfter(5, 'cancel') });
      const call = agent.callTool('elicit_confirm', { question: 'Deploy from print mode?' });
      await decide(ext, await created(ext, 'Deploy from print mode?'), 'approved', { confirmed: true });
      expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
      expect(agent.elicitations).toHaveLength(kind === 'v2-2026' ? 0 : 1);
    },
  );

  it('codex exec (its calls say turn_trigger "exec"): the extension at once; the Codex TUI ("user"): its form', async () => {
    const { agent, ext } = await known({ clientInfo: CODEX, capabilities: CODEX_CAPS, host: hosts.answerAfter(5, 'decline') });
    const call = agent.callTool('elicit_confirm', { question: 'Deploy from codex exec?' }, { meta: codexTurn('exec') });
    await decide(ext, await created(ext, 'Deploy from codex exec?'), 'approved', { confirmed: true });
    expect((await call).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'extension' });
    expect(agent.elicitations).toHaveLength(0);
    const tui = await known({ clientInfo: CODEX, capabilities: CODEX_CAPS, host: hosts.acceptAfter(5, () => ({ answer: 'no' })) });
    expect((await tui.agent.callTool('elicit_confirm', { question: 'Deploy from the Codex TUI?' }, { meta: codexTurn('user') })).structuredContent).toEqual({
      confirmed: false,
      action: 'accept',
      via: 'host',
    });
    expect(tui.agent.elicitations).toHaveLength(1);
  });

  it('Claude Code in interactive mode (it declares the tasks extension): the host\'s dialog', async () => {
    const { agent } = await known({ clientInfo: CLAUDE_CODE, capabilities: INTERACTIVE_CAPS, host: hosts.acceptAfter(5, () => ({ answer: 'yes' })) });
    expect((await agent.callTool('elicit_confirm', { question: 'Deploy from the TUI?' })).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'host' });
    expect(agent.elicitations).toHaveLength(1);
  });

  it('Cursor, which drops dialogs: the extension at once, instead of waiting out a dialog that never comes', async () => {
    const { agent, ext } = await known({ clientInfo: { name: 'cursor-vscode', version: '1.0.0' }, capabilities: { elicitation: {} }, host: hosts.never() });
    const call = agent.callTool('elicit_confirm', { question: 'Ship from Cursor?' });
    await decide(ext, await created(ext, 'Ship from Cursor?'), 'approved', { confirmed: false });
    expect((await call).structuredContent).toEqual({ confirmed: false, action: 'accept', via: 'extension' });
    expect(agent.elicitations).toHaveLength(0);
  });
});

describe.each(CLIENT_KINDS)('issue 18 item 8: nobody paired and the host cannot show the dialog (%s)', (kind) => {
  it.each([
    ['declines in 5 ms', { host: hosts.answerAfter(5, 'decline') }, /the host answered "decline" in \d+ ms, faster than a person can/],
    ['is a known host', { clientInfo: { name: 'cursor-vscode', version: '1.0.0' }, host: hosts.never() }, /known to the table of hosts \(cursor-drops\)/],
  ])('a host that %s: the seed\'s error shape, naming why', async (_name, options, why) => {
    const agent = await connect(kind, { inProcess: true, ...options, env: { ELICITLY_MIN_TIMEOUT_SECONDS: '1' } });
    try {
      const result = await agent.callTool('elicit_confirm', { question: 'Ship it?' });
      expect(agent.elicitations.length).toBeLessThanOrEqual(1);
      expect(result.structuredContent).toEqual({ confirmed: null, question: 'Ship it?', error: expect.stringMatching(why), next: expect.stringContaining('npx elicitly-companion pair') });
    } finally {
      await agent.close();
    }
  });
});
