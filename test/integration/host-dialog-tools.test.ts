import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClientKind, Harness, HarnessOptions, HostScript } from '../helpers/mcp-harness.js';
import { CLIENT_KINDS, connect, hosts } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';

const PROBE_BOUND_MS = 400;
const open: Harness[] = [];

async function start(kind: ClientKind, options: HarnessOptions = {}): Promise<Harness> {
  const harness = await connect(kind, { inProcess: true, ...options, env: { ELICITLY_PROBE_TIMEOUT_MS: String(PROBE_BOUND_MS), ...options.env } });
  open.push(harness);
  return harness;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const probe = async (h: Harness) => (await h.callTool('elicit_doctor', { probeElicitation: true })).structuredContent as {
  probes: { elicitationForm: Record<string, unknown> };
};

const textJson = (result: { content?: unknown[] }) => JSON.parse((result.content?.[0] as { text: string }).text) as unknown;

describe.each(CLIENT_KINDS)('over stdio with the %s client', (kind) => {
  const era = kind === 'v2-2026' ? '2026-07-28' : '2025';
  /**
   * One server per client kind and tool for the default capabilities; each test scripts how the host answers next. A
   * server of its own per describe: a probe that finds the dialog broken sends that session's later `auto` asks to the
   * extension, which the tool tests below must not inherit.
   */
  const sharedServer = () => {
    let script: HostScript = hosts.throws();
    let server: Harness;
    beforeAll(async () => {
      server = await connect(kind, { inProcess: true, host: (params, signal) => script(params, signal), env: { ELICITLY_PROBE_TIMEOUT_MS: String(PROBE_BOUND_MS) } });
    });
    afterAll(() => server.close());
    return (host: HostScript): Harness => {
      script = host;
      server.elicitations.length = 0;
      return server;
    };
  };

  describe('elicit_doctor', () => {
    const using = sharedServer();
    it('echoes an empty elicitation capability as sent and reads it as form mode', async () => {
      const h = await start(kind, { capabilities: { elicitation: {} } });
      const result = await h.callTool('elicit_doctor', {});
      const report = result.structuredContent as Record<string, Record<string, unknown>>;
      expect(result.isError).toBeFalsy();
      expect(report.era).toBe(era);
      expect(report.initialize).toMatchObject({
        request: { clientInfo: { name: `test-host-${kind}` }, capabilities: { elicitation: {} } },
        response: { protocolVersion: kind === 'v2-2026' ? '2026-07-28' : '2025-11-25', serverInfo: { name: 'elicitly', version: '0.1.0' } },
      });
      expect((report.initialize?.request as Record<string, unknown>).capabilities).toEqual({ elicitation: {} });
      expect(report.support).toEqual({ elicitation: true, elicitationForm: true, elicitationUrl: false, sampling: false, roots: false, extensions: { apps: false, tasks: false, names: [] } });
      expect(report.probes).toBeUndefined();
      expect(textJson(result)).toEqual(report);
      expect(h.elicitations).toHaveLength(0);
    });

    it('reads {form, url} as both modes', async () => {
      const h = await start(kind, { capabilities: { elicitation: { form: {}, url: {} } } });
      const report = (await h.callTool('elicit_doctor', {})).structuredContent as Record<string, Record<string, unknown>>;
      expect((report.initialize?.request as Record<string, unknown>).capabilities).toEqual({ elicitation: { form: {}, url: {} } });
      expect(report.support).toMatchObject({ elicitation: true, elicitationForm: true, elicitationUrl: true });
    });

    it('skips the probe when the host did not advertise elicitation', async () => {
      const h = await start(kind, { capabilities: {} });
      const report = (await probe(h)) as unknown as Record<string, Record<string, unknown>>;
      expect(report.support).toMatchObject({ elicitation: false, elicitationForm: false });
      expect(report.probes).toEqual({ elicitationForm: { attempted: false, reason: 'client did not advertise elicitation' } });
    });

    it('a host that accepts after 50 ms is working', async () => {
      const h = using(hosts.acceptAfter(50, () => ({ probe: 'ok' })));
      const p = (await probe(h)).probes.elicitationForm;
      expect(p).toMatchObject({ attempted: true, action: 'accept', data: 'ok', verdict: 'working' });
      expect(p.latencyMs).toBeGreaterThanOrEqual(50);
      expect(p.latencyMs).toBeLessThan(2000);
      expect(h.elicitations[0]?.requestedSchema).toMatchObject({ properties: { probe: { oneOf: [{ const: 'ok', title: 'OK' }] } } });
    });

    it('the alias probe_elicitation runs the probe too', async () => {
      const h = using(hosts.acceptAfter(50, () => ({ probe: 'ok' })));
      const report = (await h.callTool('elicit_doctor', { probe_elicitation: true })).structuredContent as Record<string, unknown>;
      expect(report.probes).toMatchObject({ elicitationForm: { verdict: 'working' } });
    });

    it.each([
      ['declines in 5 ms', hosts.answerAfter(5, 'decline'), 'decline'],
      ['cancels in 8 ms', hosts.answerAfter(8, 'cancel'), 'cancel'],
    ] as const)('a host that %s auto-cancelled', async (_name, host, action) => {
      const h = using(host);
      const p = (await probe(h)).probes.elicitationForm;
      expect(p).toMatchObject({ attempted: true, action, data: null, verdict: 'advertised_but_autocanceled' });
      expect(p.latencyMs).toBeLessThan(2000);
    });

    it('a host that declines after 2.5 s was a person declining', async () => {
      const h = await start(kind, { host: hosts.answerAfter(2500, 'decline'), env: { ELICITLY_PROBE_TIMEOUT_MS: '10000' } });
      const p = (await probe(h)).probes.elicitationForm;
      expect(p).toMatchObject({ attempted: true, action: 'decline', data: null, verdict: 'user_declined' });
      expect(p.latencyMs).toBeGreaterThanOrEqual(2500);
    });

    if (kind === 'v2-2026') {
      // On 2026-07-28 the server has already returned `input_required`; "unanswered" is an answer that comes back after the bound.
      it('an answer that comes back after the probe bound is unanswered', async () => {
        const h = using(hosts.acceptAfter(PROBE_BOUND_MS + 300, () => ({ probe: 'ok' })));
        const p = (await probe(h)).probes.elicitationForm;
        expect(p).toMatchObject({ attempted: true, action: null, data: null, verdict: 'advertised_but_unanswered' });
        expect(p.latencyMs).toBeGreaterThan(PROBE_BOUND_MS);
      });

      it('a host whose dialog throws fails the call on the host side; the server keeps serving', async () => {
        const h = using(hosts.throws());
        await expect(h.callTool('elicit_doctor', { probeElicitation: true })).rejects.toThrow('this host cannot show forms');
        const report = (await h.callTool('elicit_doctor', {})).structuredContent as Record<string, unknown>;
        expect(report.era).toBe('2026-07-28');
      });
    } else {
      it('a host that never answers is unanswered within the probe bound', async () => {
        const h = using(hosts.never());
        const began = Date.now();
        const p = (await probe(h)).probes.elicitationForm;
        expect(p).toMatchObject({ attempted: true, action: null, data: null, verdict: 'advertised_but_unanswered' });
        expect(p.reason).toMatch(/no answer within/);
        expect(Date.now() - began).toBeLessThan(PROBE_BOUND_MS + 1500);
      });

      it('a host whose dialog throws is unsupported', async () => {
        const h = using(hosts.throws());
        const p = (await probe(h)).probes.elicitationForm;
        expect(p).toMatchObject({ attempted: true, action: null, data: null, verdict: 'unsupported' });
        expect(p.reason).toContain('this host cannot show forms');
      });
    }
  });

  describe('elicit_form', () => {
    const using = sharedServer();
    const schema = {
      type: 'object',
      properties: {
        version: { type: 'string', title: 'Version', minLength: 1 },
        prerelease: { type: 'boolean', default: false },
        channel: { type: 'string', oneOf: [{ const: 'stable', title: 'Stable' }, { const: 'beta', title: 'Beta' }] },
      },
      required: ['version'],
    };

    it('returns the collected fields on accept', async () => {
      const h = using(hosts.acceptAfter(50, () => ({ version: '1.2.0', prerelease: false, channel: 'beta' })));
      const result = await h.callTool('elicit_form', { message: 'Enter release details', requestedSchema: schema });
      expect(result.structuredContent).toEqual({ action: 'accept', content: { version: '1.2.0', prerelease: false, channel: 'beta' }, via: 'host' });
      expect(textJson(result)).toEqual(result.structuredContent);
      expect(h.elicitations[0]).toMatchObject({ message: 'Enter release details', requestedSchema: { properties: { version: { type: 'string' } } } });
    });

    // Forced to the host: under `auto` a "no" this fast goes on to the extension (see ask-routing.test.ts).
    it.each(['decline', 'cancel'] as const)('returns content null on %s', async (action) => {
      const h = using(hosts.answerAfter(10, action));
      const result = await h.callTool('elicit_form', { message: 'm', requestedSchema: schema, via: 'host' });
      expect(result.structuredContent).toEqual({ action, content: null, via: 'host' });
    });

    it('refuses accepted content that breaks the schema, in every era', async () => {
      const h = using(hosts.acceptAfter(10, () => ({ version: '', channel: 'nightly' })));
      const result = await h.callTool('elicit_form', { message: 'm', requestedSchema: schema });
      const out = result.structuredContent as Record<string, unknown>;
      expect(out.action).toBe('error');
      expect(out.content).toBeNull();
      expect(out.via).toBe('host');
      expect(String(out.error).length).toBeLessThanOrEqual(300);
    });

    it('answers action error when forced to a host that cannot elicit', async () => {
      const h = await start(kind, { capabilities: {} });
      const result = await h.callTool('elicit_form', { message: 'm', requestedSchema: schema, via: 'host' });
      expect(result.structuredContent).toEqual({ action: 'error', content: null, error: 'client did not advertise elicitation', via: 'host' });
    });

    it.each([
      ['a nested object', { type: 'object', properties: { a: { type: 'object', properties: {} } } }, 'requestedSchema.properties.a.type'],
      ['an unknown format', { type: 'object', properties: { a: { type: 'string', format: 'phone' } } }, 'requestedSchema.properties.a.format'],
      ['a default of the wrong type', { type: 'object', properties: { n: { type: 'integer', default: 'x' } } }, 'requestedSchema.properties.n.default'],
      ['required naming a missing key', { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, 'requestedSchema.required[0]'],
    ])('refuses %s before anything reaches the host', async (_name, requestedSchema, path) => {
      const h = using(hosts.acceptAfter(10, () => ({})));
      const result = await h.callTool('elicit_form', { message: 'm', requestedSchema });
      expect(result.isError).toBe(true);
      const body = textJson(result) as { error: string; message: string; issues: { path: string }[] };
      expect(body.error).toBe('invalid_arguments');
      expect(body.issues[0]?.path).toBe(path);
      expect(body.message).toContain(path);
      expect(h.elicitations).toHaveLength(0);
    });

    it('an input with 200,000 faults is refused with the first 20 listed and the rest counted, not a 21 MB answer', async () => {
      const h = using(hosts.acceptAfter(10, () => ({})));
      const options = [{ value: 'a' }, { value: 'b' }];
      const result = await h.callTool('elicit_selection', { message: 'm', options, multiple: true, default: Array.from({ length: 200_000 }, () => 'a') });
      expect(result.isError).toBe(true);
      const body = textJson(result) as { error: string; issues: { path: string; rule: string }[]; moreIssues: number };
      expect(body.error).toBe('invalid_arguments');
      expect(body.issues).toHaveLength(20);
      expect(body.issues[0]).toMatchObject({ path: 'default[1]', rule: 'duplicate' });
      expect(body.moreIssues).toBe(200_000 - 20);
      expect(JSON.stringify(result).length).toBeLessThan(64 * 1024);
      expect(h.elicitations).toHaveLength(0);
    });
  });

  describe('elicit_confirm', () => {
    const using = sharedServer();
    it.each([
      ['yes', { confirmed: true, action: 'accept' }],
      ['no', { confirmed: false, action: 'accept' }],
    ])('accept + %s', async (answer, expected) => {
      const h = using(hosts.acceptAfter(10, () => ({ answer })));
      const result = await h.callTool('elicit_confirm', { question: 'Ship it?' });
      expect(result.structuredContent).toEqual({ ...expected, via: 'host' });
    });

    it('decline → confirmed false', async () => {
      const h = using(hosts.answerAfter(10, 'decline'));
      expect((await h.callTool('elicit_confirm', { question: 'Ship it?', via: 'host' })).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'host' });
    });

    it('a decline that took a person\'s time stays the answer under auto', async () => {
      const h = using(hosts.answerAfter(2100, 'decline'));
      expect((await h.callTool('elicit_confirm', { question: 'Ship it?' })).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'host' });
    });

    it('cancel → confirmed null with the question', async () => {
      const h = using(hosts.answerAfter(10, 'cancel'));
      expect((await h.callTool('elicit_confirm', { question: 'Ship it?', via: 'host' })).structuredContent).toEqual({
        confirmed: null,
        action: 'cancel',
        question: 'Ship it?',
        via: 'host',
      });
    });

    it('error → confirmed null with the question and the reason', async () => {
      const h = await start(kind, { capabilities: {} });
      expect((await h.callTool('elicit_confirm', { question: 'Ship it?', via: 'host' })).structuredContent).toEqual({
        confirmed: null,
        question: 'Ship it?',
        error: 'client did not advertise elicitation',
        via: 'host',
      });
    });

    it('shows a single-choice field titled with the trimmed labels', async () => {
      const h = using(hosts.acceptAfter(10, () => ({ answer: 'yes' })));
      await h.callTool('elicit_confirm', { question: '¿Publicar?', yesLabel: '  Sí ', noLabel: 'No' });
      expect(h.elicitations[0]).toMatchObject({
        message: '¿Publicar?',
        requestedSchema: { properties: { answer: { type: 'string', oneOf: [{ const: 'yes', title: 'Sí' }, { const: 'no', title: 'No' }] } }, required: ['answer'] },
      });
    });

    it.each([
      ['an unknown key', { question: 'q', extra: 1 }, 'extra'],
      ['an empty question', { question: '  ' }, 'question'],
      ['a 41-character label', { question: 'q', yesLabel: 'y'.repeat(41) }, 'yesLabel'],
      ['an empty label', { question: 'q', noLabel: ' ' }, 'noLabel'],
      ['a missing question', {}, 'question'],
    ])('refuses %s, naming the field', async (_name, args, field) => {
      const h = using(hosts.acceptAfter(10, () => ({ answer: 'yes' })));
      const result = await h.callTool('elicit_confirm', args);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(field);
      expect(h.elicitations).toHaveLength(0);
    });
  });
});

describe('waiting on a person (2025 era, pushed elicitation)', () => {
  it('sends progress while the dialog is open when the call has a progressToken', async () => {
    const ticks: unknown[] = [];
    // The dialog stays open until a tick arrived. The server runs in this process: its progress interval (5 s) runs on
    // a fake clock the host advances, instead of being waited out; only intervals are faked, the rest stays real.
    const h = await start('v2-2025', {
      host: async () => {
        await until('a progress tick', () => (vi.advanceTimersToNextTimer(), ticks[0]), 8000);
        return { action: 'accept', content: { answer: 'yes' } };
      },
    });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'], shouldClearNativeTimers: true });
    try {
      const result = await h.callTool('elicit_confirm', { question: 'Ship it?' }, { onprogress: (p) => ticks.push(p) });
      expect(result.structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'host' });
      expect(ticks.length).toBeGreaterThanOrEqual(1);
      expect(ticks[0]).toMatchObject({ progress: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('aborts the pending elicitation when the host cancels the tool call', async () => {
    let aborted: () => void = () => undefined;
    const sawAbort = new Promise<void>((resolve) => (aborted = resolve));
    let shown: () => void = () => undefined;
    const dialogOpen = new Promise<void>((resolve) => (shown = resolve));
    const h = await start('v2-2025', {
      host: (_params, signal) =>
        new Promise(() => {
          signal.addEventListener('abort', () => aborted());
          shown();
        }),
    });
    const controller = new AbortController();
    const call = h.callTool('elicit_confirm', { question: 'Ship it?' }, { signal: controller.signal });
    // Cancelled once the dialog is open, so there is an elicitation to abort.
    await Promise.race([dialogOpen, new Promise((_, reject) => setTimeout(() => reject(new Error('the dialog was not shown')), 5000))]);
    controller.abort();
    await expect(call).rejects.toThrow();
    await Promise.race([sawAbort, new Promise((_, reject) => setTimeout(() => reject(new Error('elicitation was not aborted')), 3000))]);
    const after = await h.callTool('elicit_doctor', {});
    expect(after.isError).toBeFalsy();
  });
});
