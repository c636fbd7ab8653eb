import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientKind, Harness, HarnessOptions } from '../helpers/mcp-harness.js';
import { CLIENT_KINDS, connect, hosts } from '../helpers/mcp-harness.js';
import { ScriptedExtension, pairedKey } from '../helpers/scripted-extension.js';

// The doctor's additions of issue 11 (item 4), against the built server over stdio with each client kind.

const PROBE_BOUND_MS = 400;
const ROUTED = ['elicit_confirm', 'elicit_form', 'elicit_selection'] as const;
const open: Harness[] = [];
const extensions: ScriptedExtension[] = [];
const temps: string[] = [];

async function start(kind: ClientKind, options: HarnessOptions = {}): Promise<Harness> {
  const harness = await connect(kind, {
    inProcess: true,
    ...options,
    env: { ELICITLY_PROBE_TIMEOUT_MS: String(PROBE_BOUND_MS), ELICITLY_MIN_TIMEOUT_SECONDS: '1', ...options.env },
  });
  open.push(harness);
  return harness;
}

afterEach(async () => {
  for (const ext of extensions.splice(0)) ext.close();
  await Promise.all(open.splice(0).map((h) => h.close()));
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Report = Record<string, unknown> & {
  support: Record<string, unknown>;
  companion: { hub: { role: string; port: number }; reviewers: { extensionsConnected: number; lastSeenAt: string | null } | null; pending: number | null; stateDir: string; note?: string };
  routing: Record<(typeof ROUTED)[number], { via: string; why: string }>;
  deprecations: { feature: string; message: string }[];
  probes?: { elicitationForm: Record<string, unknown> };
};

async function doctor(h: Harness, args: Record<string, unknown> = {}): Promise<Report> {
  const result = await h.callTool('elicit_doctor', args);
  expect(result.isError).toBeFalsy();
  const report = result.structuredContent as Report;
  // Some hosts read only the text block: it is the same JSON.
  expect(JSON.parse((result.content?.[0] as { text: string }).text)).toEqual(report);
  return report;
}

/** Whether anything listens on the port: a passive report must not have elected a hub. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function routes(report: Report): string[] {
  return ROUTED.map((tool) => report.routing[tool].via);
}

describe.each(CLIENT_KINDS)('elicit_doctor additions with the %s client', (kind) => {
  const era2026 = kind === 'v2-2026';

  describe('companion', () => {
    it('before any approval call: role none, nothing about the hub known, and no hub elected by the report', async () => {
      const h = await start(kind, { capabilities: {} });
      const report = await doctor(h);
      expect(report.companion).toEqual({
        hub: { role: 'none', port: h.port },
        reviewers: null,
        pending: null,
        stateDir: h.stateDir,
        note: expect.stringContaining('checkCompanion: true'),
      });
      expect(await listening(h.port)).toBe(false);
      for (const tool of ROUTED) {
        expect(report.routing[tool]).toEqual({ via: 'extension', why: expect.stringContaining('not known until this process joins the hub') });
      }
    });

    it('after an approval call: hub, with the pending count; no extension: the asks reach nobody (none), with how to connect one', async () => {
      const h = await start(kind, { capabilities: {} });
      const created = await h.callTool('elicit_approval', { message: 'Refund order 42?', context: { order: 42 } });
      expect(created.structuredContent).toMatchObject({ status: 'pending' });
      const report = await doctor(h);
      expect(report.companion).toEqual({ hub: { role: 'hub', port: h.port }, reviewers: { extensionsConnected: 0, lastSeenAt: null }, pending: 1, stateDir: h.stateDir });
      expect(routes(report)).toEqual(['none', 'none', 'none']);
      expect(report.routing.elicit_form.why).toMatch(/none is connected: ask the person to open the Elicitly extension.*npx elicitly-companion pair/);
    });

    it('checkCompanion: true joins the hub to answer', async () => {
      const h = await start(kind, { capabilities: {} });
      const report = await doctor(h, { checkCompanion: true });
      expect(report.companion).toMatchObject({ hub: { role: 'hub', port: h.port }, reviewers: { extensionsConnected: 0 }, pending: 0 });
      expect(await listening(h.port)).toBe(true);
    });

    it('a connected extension is counted, with when it was last seen; the asks go to it', async () => {
      const h = await start(kind, { capabilities: {} });
      await doctor(h, { checkCompanion: true });
      const before = Date.now();
      extensions.push(await ScriptedExtension.connect(h.port, { key: pairedKey(h.stateDir) }));
      const report = await doctor(h);
      expect(report.companion.reviewers?.extensionsConnected).toBe(1);
      const lastSeenAt = report.companion.reviewers?.lastSeenAt ?? '';
      expect(lastSeenAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(lastSeenAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(routes(report)).toEqual(['extension', 'extension', 'extension']);
      expect(report.routing.elicit_selection.why).toMatch(/where one is connected, because the host did not advertise form elicitation/);
    });

    it('a second process is a relay and reads the same hub', async () => {
      const hub = await start(kind, { capabilities: {} });
      await hub.callTool('elicit_approval', { message: 'One', context: { a: 1 } });
      const relay = await start(kind, { capabilities: {}, env: { ELICITLY_STATE_DIR: hub.stateDir, ELICITLY_PORT: String(hub.port) } });
      const report = await doctor(relay, { checkCompanion: true });
      expect(report.companion).toMatchObject({ hub: { role: 'relay', port: hub.port }, reviewers: { extensionsConnected: 0 }, pending: 1, stateDir: hub.stateDir });
    });
  });

  describe('routing', () => {
    it('a host that advertises form elicitation: the host dialog, for each ask', async () => {
      const h = await start(kind, { capabilities: { elicitation: {} } });
      const report = await doctor(h);
      for (const tool of ROUTED) expect(report.routing[tool]).toEqual({ via: 'host', why: expect.stringMatching(/^An auto call shows the host's own dialog: .*advertises form elicitation/) });
    });

    it('a URL-only host: the extension, saying the host has only URL mode', async () => {
      const h = await start(kind, { capabilities: { elicitation: { url: {} } } });
      const report = await doctor(h);
      expect(report.support).toMatchObject({ elicitation: true, elicitationForm: false, elicitationUrl: true });
      for (const tool of ROUTED) expect(report.routing[tool]).toEqual({ via: 'extension', why: expect.stringContaining('advertises only URL-mode elicitation') });
    });

    it('after a probe that auto-cancels: the extension, and a later auto ask really goes there', async () => {
      const h = await start(kind, { host: hosts.answerAfter(5, 'cancel') });
      expect((await doctor(h)).routing.elicit_confirm.via).toBe('host');
      const report = await doctor(h, { probeElicitation: true });
      expect(report.probes?.elicitationForm).toMatchObject({ verdict: 'advertised_but_autocanceled' });
      for (const tool of ROUTED) expect(report.routing[tool]).toEqual({ via: 'extension', why: expect.stringMatching(/shown broken in this session: the doctor's probe was answered "cancel" in \d+ ms/) });
      expect(h.elicitations).toHaveLength(1);
      // Paired once (none connected): the ask is filed for the extension rather than refused.
      pairedKey(h.stateDir);
      const asked = await h.callTool('elicit_confirm', { question: 'Ship it?' });
      expect(asked.structuredContent).toMatchObject({ via: 'extension' });
      expect(h.elicitations).toHaveLength(1);
    });

    it('issue 18 item 2: a probe declined in 300 ms keeps the seed\'s verdict, but the dialog stays the route (a person can click that fast)', async () => {
      const h = await start(kind, { host: hosts.answerAfter(300, 'decline') });
      const report = await doctor(h, { probeElicitation: true });
      expect(report.probes?.elicitationForm).toMatchObject({ action: 'decline', verdict: 'advertised_but_autocanceled' });
      expect(routes(report)).toEqual(['host', 'host', 'host']);
      expect(report.routing.elicit_confirm.why).toContain('under 250 ms');
      expect((await h.callTool('elicit_confirm', { question: 'Ship it?' })).structuredContent).toEqual({ confirmed: false, action: 'decline', via: 'host' });
      expect(h.elicitations).toHaveLength(2);
    });

    it('issue 18 item 5: a known host names the entry used; the same product in a mode whose dialog works does not', async () => {
      const clientInfo = { name: 'codex-mcp-client', version: '0.171.0' };
      const capabilities = { experimental: { 'codex/auth-change': {} }, elicitation: { form: {}, url: {} } };
      const h = await start(kind, { clientInfo, capabilities });
      const turn = (trigger: string) => ({ meta: { 'x-codex-turn-metadata': { turn_trigger: trigger } } });
      const report = (await h.callTool('elicit_doctor', {}, turn('exec'))).structuredContent as Report;
      for (const tool of ROUTED) {
        expect(report.routing[tool]).toMatchObject({
          via: 'extension',
          why: expect.stringContaining('known to the table of hosts (codex-exec)'),
          knownHost: { id: 'codex-exec', evidence: expect.stringContaining('`codex exec` answers every elicitation "decline" in 1-6 ms') },
        });
      }
      const tui = (await h.callTool('elicit_doctor', {}, turn('user'))).structuredContent as Report;
      expect(routes(tui)).toEqual(['host', 'host', 'host']);
      expect(tui.routing.elicit_confirm).not.toHaveProperty('knownHost');
      if (era2026) {
        const print = { roots: { listChanged: true }, elicitation: { form: {}, url: {} } };
        const claude = await start(kind, { clientInfo: { name: 'claude-code', version: '2.1.332' }, capabilities: print });
        expect((await doctor(claude)).routing.elicit_form).toMatchObject({ via: 'extension', knownHost: { id: 'claude-code-print' } });
      }
    });

    it('issue 18 item 3: a client that renders MCP Apps counts the chat (app), not nobody', async () => {
      const apps = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
      const h = await start(kind, { capabilities: apps });
      const report = await doctor(h, { checkCompanion: true });
      expect(routes(report)).toEqual(['app', 'app', 'app']);
      expect(report.routing.elicit_confirm.why).toMatch(/^An auto call is shown in the chat, in the Elicitly review under its result/);
      extensions.push(await ScriptedExtension.connect(h.port, { key: pairedKey(h.stateDir) }));
      expect(routes(await doctor(h))).toEqual(['app+extension', 'app+extension', 'app+extension']);
    });

    it('a probe answered by a person (working) keeps the host dialog', async () => {
      const h = await start(kind, { host: hosts.acceptAfter(30, () => ({ probe: 'ok' })) });
      const report = await doctor(h, { probeElicitation: true });
      expect(report.probes?.elicitationForm).toMatchObject({ verdict: 'working', data: 'ok' });
      expect(routes(report)).toEqual(['host', 'host', 'host']);
    });
  });

  describe('support.extensions', () => {
    it('reports MCP Apps and tasks as booleans, with the raw names', async () => {
      const h = await start(kind, {
        capabilities: {
          elicitation: {},
          extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] }, 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} },
        },
      });
      const report = await doctor(h);
      expect(report.support.extensions).toEqual({
        apps: true,
        tasks: true,
        names: ['io.modelcontextprotocol/ui', 'io.modelcontextprotocol/tasks', 'io.modelcontextprotocol/skills'],
      });
    });

    it('none declared', async () => {
      const h = await start(kind, { capabilities: { elicitation: {} } });
      expect((await doctor(h)).support.extensions).toEqual({ apps: false, tasks: false, names: [] });
    });
  });

  describe('the probe', () => {
    it('asks for a required choice with no default', async () => {
      const h = await start(kind, { host: hosts.acceptAfter(5, () => ({ probe: 'ok' })) });
      await doctor(h, { probeElicitation: true });
      const schema = h.elicitations[0]?.requestedSchema as { properties: { probe: Record<string, unknown> }; required: string[] };
      expect(schema.required).toEqual(['probe']);
      expect(schema.properties.probe).not.toHaveProperty('default');
    });

    it.each([
      ['{} (auto-approve)', {}],
      ['a value that is not on offer', { probe: 'yes' }],
    ])('a host that accepts with %s auto-accepted, and later auto asks go to the extension', async (_name, content) => {
      const h = await start(kind, { host: hosts.acceptAfter(5, () => content) });
      const report = await doctor(h, { probeElicitation: true });
      expect(report.probes?.elicitationForm).toEqual({
        attempted: true,
        action: 'accept',
        latencyMs: expect.any(Number),
        data: null,
        verdict: 'advertised_but_autoaccepted',
        reason: expect.stringContaining('without the choice a person must make'),
      });
      expect(routes(report)).toEqual(['extension', 'extension', 'extension']);
      expect(report.routing.elicit_form.why).toContain('accepted without the choice a person must make');
    });

    it('a URL-only host is not probed: client did not advertise form elicitation (no elicitation at all keeps the seed reason)', async () => {
      const urlOnly = await start(kind, { capabilities: { elicitation: { url: {} } }, host: hosts.acceptAfter(5, () => ({ probe: 'ok' })) });
      const report = await doctor(urlOnly, { probeElicitation: true });
      expect(report.probes).toEqual({ elicitationForm: { attempted: false, reason: 'client did not advertise form elicitation' } });
      expect(urlOnly.elicitations).toHaveLength(0);
      const none = await start(kind, { capabilities: {} });
      expect((await doctor(none, { probeElicitation: true })).probes).toEqual({ elicitationForm: { attempted: false, reason: 'client did not advertise elicitation' } });
    });
  });

  describe('share', () => {
    it('share: true writes the report without the probe payload, 0600 in a 0700 dir, and says where', async () => {
      const h = await start(kind, { host: hosts.acceptAfter(5, () => ({ probe: 'ok' })) });
      const report = await doctor(h, { probeElicitation: true, share: true, productName: 'Test Host', productVersion: '9.9', notes: 'CI, Linux' });
      expect(report).toMatchObject({ shared: true, sharePath: expect.stringContaining(join(h.stateDir, 'reports')) });
      expect(report.probes?.elicitationForm).toMatchObject({ data: 'ok', verdict: 'working' });
      const file = String(report.sharePath);
      expect(lstatSync(file).mode & 0o777).toBe(0o600);
      expect(lstatSync(join(h.stateDir, 'reports')).mode & 0o777).toBe(0o700);
      const text = readFileSync(file, 'utf8');
      const written = JSON.parse(text) as Record<string, Record<string, unknown>>;
      expect(written).toMatchObject({ kind: 'elicitly-doctor-report', version: 1, product: { name: 'Test Host', version: '9.9' }, notes: 'CI, Linux' });
      expect(written.report).toMatchObject({ era: report.era, initialize: report.initialize, support: report.support, routing: report.routing, companion: report.companion });
      expect(written.report?.probes).toEqual({ elicitationForm: { attempted: true, action: 'accept', latencyMs: expect.any(Number), verdict: 'working' } });
      expect(text).not.toContain('"data"');
      // The report of the call itself is not part of what is written.
      expect(text).not.toContain('sharePath');
    });

    it('issue 18 item 8: share: true also returns the report as a ready-to-file text, the same file without payloads', async () => {
      const h = await start(kind, { host: hosts.acceptAfter(5, () => ({ probe: 'ok' })) });
      const report = await doctor(h, { probeElicitation: true, share: true, productName: 'Test Host', productVersion: '9.9' });
      const text = String(report.shareText);
      expect(text.split('\n')[0]).toBe('## Elicitly host report: Test Host 9.9');
      expect(text).toContain('- Probe of the form dialog: working (action accept, ');
      const fenced = /\n(`{3,})json\n([\s\S]*)\n\1\n$/.exec(text);
      expect(JSON.parse(fenced?.[2] ?? 'null')).toEqual(JSON.parse(readFileSync(String(report.sharePath), 'utf8')));
      expect(text).not.toContain('"data"');
    });

    it.each([
      ['share: false', { share: false }],
      ['share absent', {}],
    ])('%s writes nothing', async (_name, args) => {
      const h = await start(kind, { capabilities: {} });
      const report = await doctor(h, { ...args, productName: 'Test Host' });
      expect(report).not.toHaveProperty('shared');
      expect(existsSync(join(h.stateDir, 'reports'))).toBe(false);
    });

    it('a reports dir that is a symbolic link is refused: shared false with shareError, and the report still comes back', async () => {
      const h = await start(kind, { capabilities: {} });
      const elsewhere = mkdtempSync(join(tmpdir(), 'elicitly-elsewhere-'));
      temps.push(elsewhere);
      mkdirSync(h.stateDir, { recursive: true, mode: 0o700 });
      symlinkSync(elsewhere, join(h.stateDir, 'reports'));
      const report = await doctor(h, { share: true });
      expect(report).toMatchObject({ shared: false, shareError: expect.stringContaining('symbolic link'), support: expect.any(Object) });
      expect(report).not.toHaveProperty('sharePath');
      expect(readdirSync(elsewhere)).toEqual([]);
    });

    it.each([
      ['productName', 100],
      ['productVersion', 50],
      ['notes', 2000],
    ])('%s over its limit (%i) is refused, naming the field and the limit, and nothing is written', async (field, limit) => {
      const h = await start(kind, { capabilities: {} });
      const outcome = await h.callTool('elicit_doctor', { share: true, [field]: 'x'.repeat(limit + 1) }).then(
        (result) => ({ refused: result.isError === true, text: JSON.stringify(result.content) }),
        (error: unknown) => ({ refused: true, text: String(error) }),
      );
      expect(outcome.refused).toBe(true);
      expect(outcome.text).toContain(`${field}: must be at most ${limit} characters long`);
      expect(existsSync(join(h.stateDir, 'reports'))).toBe(false);
    });

    it('finding 17: a huge initialize is echoed cut to 16 KB with a marker, in the shared file and in the answer', async () => {
      let deep: Record<string, unknown> = { end: true };
      for (let i = 0; i < 60; i++) deep = { d: deep };
      const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
      // Declared before the payload, so it is echoed; the payload is what a hostile or careless host adds.
      const capabilities = { elicitation: { form: {} }, experimental: { payload: { blob: 'x'.repeat(1024 * 1024), deep, many } } };
      const h = await start(kind, { capabilities });
      const report = await doctor(h, { share: true });
      expect(report.shared).toBe(true);
      const file = String(report.sharePath);
      // Before: the whole megabyte, on every call. Now: the echo's 16 KB plus the rest of the report (a few KB).
      expect(statSync(file).size).toBeLessThan(32 * 1024);
      const written = JSON.parse(readFileSync(file, 'utf8')) as { report: { initialize: { request: Record<string, unknown>; truncated?: string } } };
      const { request, truncated } = written.report.initialize;
      expect(Buffer.byteLength(JSON.stringify(request, null, 2))).toBeLessThanOrEqual(16 * 1024);
      expect(truncated).toMatch(/cut to 16384 bytes and 32 levels/);
      expect(JSON.stringify(request)).toContain('…[cut]');
      expect(request.capabilities).toMatchObject({ elicitation: { form: {} } });
      // The answer carries the same bounded echo twice (the report, and the file as shareText), and what was declared
      // is still read from all of it.
      expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThan(48 * 1024);
      expect(report.support).toMatchObject({ elicitation: true, elicitationForm: true });
    });

    it('the limits themselves are accepted', async () => {
      const h = await start(kind, { capabilities: {} });
      const report = await doctor(h, { share: true, productName: 'n'.repeat(100), productVersion: 'v'.repeat(50), notes: 'x'.repeat(2000) });
      expect(report.shared).toBe(true);
    });
  });

  describe('issue 18 item 8: the contribute-fingerprint prompt', () => {
    it('is declared and listed with its arguments', async () => {
      const h = await start(kind, { capabilities: {} });
      expect(h.serverCapabilities()).toMatchObject({ prompts: { listChanged: false } });
      const prompts = await h.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(['contribute-fingerprint']);
      expect(prompts[0]?.arguments?.map((a) => [a.name, a.required ?? false])).toEqual([
        ['productName', false],
        ['productVersion', false],
        ['notes', false],
        ['consent', false],
      ]);
    });

    it('without consent it asks first; the doctor call it names runs the probe and returns the ready-to-file report', async () => {
      const h = await start(kind, { host: hosts.acceptAfter(5, () => ({ probe: 'ok' })) });
      const asked = await h.getPrompt('contribute-fingerprint', { productName: 'Test Host', productVersion: '9.9' });
      const text = asked.messages.map((m) => m.content.text ?? '').join('\n');
      expect(asked.messages[0]?.role).toBe('user');
      expect(text).toContain('ask whether I agree; go on only with a clear yes');
      expect(text).toContain('no answers and no conversation');
      expect(text).toContain('The app is "Test Host", version "9.9".');
      // What the model is told to call, called as it says: the probe, share, and the product.
      const call = JSON.parse(/call the elicit_doctor tool with (\{.*?\}), filling/.exec(text)?.[1] ?? 'null') as Record<string, unknown>;
      expect(call).toMatchObject({ probeElicitation: true, share: true, productName: 'Test Host', productVersion: '9.9' });
      const report = await doctor(h, { ...call, notes: 'CI' });
      expect(h.elicitations).toHaveLength(1);
      expect(report).toMatchObject({ shared: true, probes: { elicitationForm: { verdict: 'working' } } });
      expect(String(report.shareText)).toMatch(/^## Elicitly host report: Test Host 9\.9\n/);
      expect(text).toContain('shareText');
    });

    it('with consent "yes" it goes ahead, and asks for what is missing', async () => {
      const h = await start(kind, { capabilities: {} });
      const text = (await h.getPrompt('contribute-fingerprint', { consent: 'yes' })).messages[0]?.content.text ?? '';
      expect(text).toContain('I agree to this:');
      expect(text).not.toContain('ask whether I agree');
      expect(text).toContain('Ask me which app I am using');
    });
  });

  describe('deprecations', () => {
    it(era2026 ? 'on 2026-07-28: sampling and roots, as the client declared them' : 'on 2025-11-25: none', async () => {
      const h = await start(kind, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
      const report = await doctor(h);
      if (era2026) {
        expect(report.deprecations.map((d) => d.feature)).toEqual(['sampling', 'roots']);
        for (const d of report.deprecations) expect(d.message).toContain('deprecated as of protocol 2026-07-28 (SEP-2577)');
      } else {
        expect(report.deprecations).toEqual([]);
      }
    });

    it('only what the client declared', async () => {
      const h = await start(kind, { capabilities: { elicitation: {}, roots: {} } });
      expect((await doctor(h)).deprecations.map((d) => d.feature)).toEqual(era2026 ? ['roots'] : []);
    });
  });
});
