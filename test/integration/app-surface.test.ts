// The review inside the chat (MCP App), server side, over stdio with real v2 clients in both protocol eras: declared
// only to clients that render apps; the app-only tools' refusals, each naming its field; the single-use key that only
// the rendered view receives; and the app and the extension deciding the same request at once.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_META_KEY, APP_MIME_TYPE, REVIEW_APP_URI, UI_EXTENSION } from '../../shared/app-surface.js';
import { portabilityFindings } from '../../shared/schema-portability.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';

const APP_CAPS = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
type Era = 'legacy' | '2026-07-28';
interface Result { content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> }

async function connectClient(era: Era, capabilities: Record<string, unknown>, env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'app-host', version: '1' }, {
    capabilities,
    versionNegotiation: era === 'legacy' ? { mode: 'legacy' } : { mode: { pin: '2026-07-28' } },
  } as ConstructorParameters<typeof Client>[1]);
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER_ENTRY], env: { ...process.env, ELICITLY_LOG_LEVEL: 'warn', ELICITLY_MIN_TIMEOUT_SECONDS: '1', ...env } as Record<string, string>, stderr: 'pipe' }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
const appKey = (result: Result) => result._meta?.[APP_META_KEY] as { elicitationId: string; token: string } | undefined;
const proposal = (): Record<string, unknown> => structuredClone(northmarkProposal);
const northmarkValues = { name: 'NorthMark Strategies', website: 'https://www.northmarkstrategies.com/', employeeCount: 230, institutionTypes: ['Asset Manager', 'Private Equity'] };

describe.each<Era>(['legacy', '2026-07-28'])('the app surface, %s era', (era) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-app-'));
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(freePort()) };
  let app: Client;
  let plain: Client;

  beforeAll(async () => {
    app = await connectClient(era, APP_CAPS, env);
    plain = await connectClient(era, {}, env);
  });
  afterAll(async () => {
    await app?.close();
    await plain?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a client without the UI extension sees today\'s tools, no _meta, no resources capability', async () => {
    const { tools } = await plain.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'elicit_approval', 'elicit_await', 'elicit_cancel', 'elicit_confirm', 'elicit_doctor', 'elicit_form', 'elicit_proposal', 'elicit_result', 'elicit_selection', 'elicit_status',
    ]);
    expect(tools.filter((t) => t._meta !== undefined).map((t) => t.name)).toEqual([]);
    expect(plain.getServerCapabilities()).toEqual({ tools: { listChanged: false }, prompts: { listChanged: false } });
    expect((await plain.listResources()).resources).toEqual([]);
    const created = await call(plain, 'elicit_proposal', proposal());
    expect(created.isError).toBeFalsy();
    expect(created._meta?.[APP_META_KEY]).toBeUndefined();
  });

  it('a client that renders apps: the creating tools point at one review resource, the app-only tools are for the app', async () => {
    const { tools } = await app.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['elicit_approval', 'elicit_proposal', 'elicit_confirm', 'elicit_form', 'elicit_selection']) {
      expect(byName.get(name)?._meta, name).toMatchObject({ ui: { resourceUri: REVIEW_APP_URI } });
    }
    for (const name of ['elicit_app_view', 'elicit_app_decide']) expect(byName.get(name)?._meta, name).toMatchObject({ ui: { resourceUri: REVIEW_APP_URI, visibility: ['app'] } });
    expect(byName.get('elicit_status')?._meta).toBeUndefined();
    const { resources } = await app.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: REVIEW_APP_URI, mimeType: APP_MIME_TYPE })]);
    const read = await app.readResource({ uri: REVIEW_APP_URI });
    const content = read.contents[0] as { mimeType: string; text: string; _meta?: Record<string, unknown> };
    expect(content.mimeType).toBe(APP_MIME_TYPE);
    expect(content.text).toBe(readFileSync(new URL('../../dist/server/review-app.html', import.meta.url), 'utf8'));
    expect(content._meta).toEqual({ ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true } });
  });

  it('the key travels only in the result _meta: never in content or structuredContent', async () => {
    const created = await call(app, 'elicit_proposal', proposal());
    const key = appKey(created);
    expect(key?.elicitationId).toBe(created.structuredContent?.elicitationId);
    expect(key?.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(created.content)).not.toContain(key!.token);
    expect(JSON.stringify(created.structuredContent)).not.toContain(key!.token);
  });

  it('what the model can see does not decide: no key, a made-up key, another request\'s key', async () => {
    const a = await call(app, 'elicit_proposal', proposal());
    const b = await call(app, 'elicit_proposal', proposal());
    const id = String(a.structuredContent?.elicitationId);
    const decision = { elicitationId: id, idempotencyKey: 'k-1', decision: 'approved', values: northmarkValues };
    const refused = async (args: Record<string, unknown>) => (await call(app, 'elicit_app_decide', args)).structuredContent?.error;
    expect(await refused(decision)).toEqual({ code: 'token_missing', field: 'token', message: 'token: required; only the review shown to the person holds it' });
    expect(await refused({ ...decision, token: 'A'.repeat(43) })).toMatchObject({ code: 'token_invalid', field: 'token' });
    expect(await refused({ ...decision, token: appKey(b)!.token })).toMatchObject({ code: 'token_invalid', field: 'token' });
    expect(await refused({ ...decision, elicitationId: 'el_unknown', token: appKey(a)!.token })).toMatchObject({ code: 'not_in_app', field: 'elicitationId' });
    expect((await call(app, 'elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    // A plain client has no app-only tool at all.
    await expect(call(plain, 'elicit_app_decide', { ...decision, token: appKey(a)!.token })).rejects.toThrow(/Tool elicit_app_decide not found/);
    expect((await call(app, 'elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
  });

  it('the view, a refused value that keeps the key, the decision, a replay refused; elicit_result says the app decided', async () => {
    const created = await call(app, 'elicit_proposal', proposal());
    const { elicitationId, token } = appKey(created)!;
    const view = await call(app, 'elicit_app_view', { elicitationId });
    expect(view.structuredContent).toMatchObject({ view: { elicitationId, kind: 'proposal', status: 'pending', request: { kind: 'proposal' } }, decided: null });

    const bad = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-bad', decision: 'approved', values: { name: 'NorthMark', employeeCount: 'many' }, included: ['name', 'employeeCount'] });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ error: { code: 'invalid', field: 'values.employeeCount' }, issues: [expect.objectContaining({ path: 'values.employeeCount', rule: 'type' })] });

    const chosen = { name: northmarkValues.name, website: northmarkValues.website };
    // A waiting elicit_await (on the plain client's connection, through the same hub) wakes on the app's decision.
    const waiting = call(plain, 'elicit_await', { elicitationId, waitSeconds: 30 });
    const good = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-good', decision: 'approved', values: chosen, included: ['name', 'website'] });
    expect(good.structuredContent).toEqual({ ok: true, status: 'approved' });
    expect((await waiting).structuredContent).toEqual({ status: 'approved' });
    const replay = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-good', decision: 'approved', values: chosen, included: ['name', 'website'] });
    // The key is spent, and the request decided: the refusal says so, by whom and when, not what is wrong with the key.
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ error: { code: 'already_decided', field: 'elicitationId', message: expect.stringMatching(/^already decided in the chat at \d{4}-/) }, decided: { via: 'app' } });

    const after = await call(app, 'elicit_app_view', { elicitationId });
    expect(after.structuredContent).toMatchObject({ view: { status: 'approved' }, decided: { via: 'app', at: expect.any(Number) } });
    const result = await call(app, 'elicit_result', { elicitationId });
    expect(result.structuredContent).toMatchObject({ status: 'consumed', decision: 'approved', decidedVia: 'app', values: { name: 'NorthMark Strategies', website: 'https://www.northmarkstrategies.com/' } });
    expect(Object.keys(result.structuredContent?.values as object).sort()).toEqual(['name', 'website']);
  });

  it('surfaces: ["extension"] keeps a request out of the app; a list without the extension is refused by name', async () => {
    const kept = await call(app, 'elicit_approval', { message: 'Delete the production database?', context: { db: 'prod' }, surfaces: ['extension'] });
    expect(kept.isError).toBeFalsy();
    expect(appKey(kept)).toBeUndefined();
    const view = await call(app, 'elicit_app_view', { elicitationId: String(kept.structuredContent?.elicitationId) });
    expect(view.structuredContent?.error).toMatchObject({ code: 'not_in_app', field: 'elicitationId' });
    for (const surfaces of [['app'], ['extension', 'extension'], []]) {
      const refused = await call(app, 'elicit_approval', { message: 'x', context: {}, surfaces });
      expect(refused.isError, JSON.stringify(surfaces)).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('surfaces');
    }
  });

  it('issue 18 item 3: an auto ask with no extension is shown in the chat, and says so; a plain client is told nobody can answer', async () => {
    const asked = await call(app, 'elicit_confirm', { question: 'Rename the project?' });
    expect(asked.structuredContent).toMatchObject({ confirmed: null, action: 'pending', via: 'extension', reviewer: { connected: false } });
    const next = String(asked.structuredContent?.next);
    expect(next).toMatch(/^The question is shown in the chat, in the Elicitly review under this result/);
    expect(next).not.toMatch(/nobody/i);
    const { elicitationId, token } = appKey(asked)!;
    expect((await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-chat', decision: 'approved', values: { confirmed: true } })).structuredContent).toEqual({ ok: true, status: 'approved' });
    expect((await call(app, 'elicit_result', { elicitationId })).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'app' });
    const doctor = await call(app, 'elicit_doctor', {});
    expect((doctor.structuredContent?.routing as Record<string, { via: string }>).elicit_confirm?.via).toBe('app');
    // Same state dir, no app: nothing could show it, so the seed's error shape, not pending.
    const refused = await call(plain, 'elicit_confirm', { question: 'Rename the project?' });
    expect(refused.structuredContent).toMatchObject({ confirmed: null, question: 'Rename the project?', error: expect.stringContaining('no Elicitly browser extension is paired') });
  });

  it('an ask that waits in the extension hands the app its key too', async () => {
    const asked = await call(app, 'elicit_confirm', { question: 'Ship it?', via: 'extension', waitSeconds: 1 });
    expect(asked.structuredContent).toMatchObject({ action: 'pending', via: 'extension' });
    const { elicitationId, token } = appKey(asked)!;
    expect(elicitationId).toBe(asked.structuredContent?.elicitationId);
    const answered = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-ask', decision: 'approved', values: { confirmed: true } });
    expect(answered.structuredContent).toEqual({ ok: true, status: 'approved' });
    expect((await call(app, 'elicit_result', { elicitationId })).structuredContent).toEqual({ confirmed: true, action: 'accept', via: 'app' });
  });
});

describe('the app and the extension deciding the same request at once', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-app-race-'));
  const port = freePort();
  let app: Client;
  afterAll(async () => {
    await app?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('exactly one decision stands, the other surface is told which one decided, and elicit_result agrees', async () => {
    app = await connectClient('legacy', APP_CAPS, { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) });
    await call(app, 'elicit_status', { elicitationId: 'el_warmup' });
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(stateDir) });
    try {
      for (let round = 0; round < 10; round++) {
        const created = await call(app, 'elicit_proposal', proposal());
        const { elicitationId, token } = appKey(created)!;
        await ext.notice('request.created', (p) => p.request.elicitationId === elicitationId, 10_000);
        const extAnswer = ext.call('decide', { elicitationId, idempotencyKey: `ext-${round}`, decision: 'rejected' }, 10_000);
        const appAnswer = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: `app-${round}`, decision: 'approved', values: { name: northmarkValues.name }, included: ['name'] });
        const answered = await extAnswer;
        if (!answered.result) throw new Error(`round ${round}: the extension's decide was refused: ${JSON.stringify(answered.error)}`);
        const fromExt = answered.result;
        const winners = [fromExt.ok, appAnswer.structuredContent?.ok].filter(Boolean);
        expect(winners, `round ${round}`).toHaveLength(1);
        const result = await call(app, 'elicit_result', { elicitationId });
        if (fromExt.ok) {
          expect(appAnswer.isError).toBe(true);
          expect(appAnswer.structuredContent).toMatchObject({ error: { code: 'already_decided', field: 'elicitationId' }, decided: { via: 'extension' } });
          expect(result.structuredContent).toMatchObject({ decision: 'rejected', decidedVia: 'extension' });
        } else {
          expect(fromExt.reason).toBe('already_decided');
          expect(result.structuredContent).toMatchObject({ decision: 'approved', decidedVia: 'app' });
          const removed = await ext.notice('request.removed', (p) => p.elicitationId === elicitationId && p.status === 'approved', 10_000);
          expect(removed).toMatchObject({ decidedVia: 'app' });
        }
      }
    } finally {
      ext.socket.close();
    }
  }, 60_000);
});

describe('issue 38: what elicit_app_decide lists, and what it says of a request decided elsewhere', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-app-decided-'));
  const port = freePort();
  let app: Client;
  let ext: ScriptedExtension | undefined;
  beforeAll(async () => {
    app = await connectClient('legacy', APP_CAPS, { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) });
    await call(app, 'elicit_status', { elicitationId: 'el_warmup' });
    ext = await ScriptedExtension.connect(port, { key: pairedKey(stateDir) });
  });
  afterAll(async () => {
    ext?.socket.close();
    await app?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('its listed input schema offers no rule, and a rule is refused as an isError result naming the field', async () => {
    const { tools } = await app.listTools();
    const listed = tools.find((t) => t.name === 'elicit_app_decide');
    expect(Object.keys(listed?.inputSchema.properties ?? {}).sort()).toEqual(['comment', 'decision', 'elicitationId', 'idempotencyKey', 'included', 'passkey', 'shownHash', 'token', 'values']);
    const created = await call(app, 'elicit_approval', { message: 'Deploy build 812?', context: { build: 812 } });
    const { elicitationId, token } = appKey(created)!;
    const withRule = await call(app, 'elicit_app_decide', {
      elicitationId, token, idempotencyKey: 'k-rule', decision: 'approved', rule: { effect: 'allow', match: { tool: 'elicit_confirm' } },
    });
    expect(withRule.isError).toBe(true);
    expect(withRule.structuredContent).toMatchObject({ error: 'invalid_arguments', issues: [expect.objectContaining({ path: 'rule' })] });
    expect((await call(app, 'elicit_status', { elicitationId })).structuredContent).toEqual({ status: 'pending' });
    // The key was not spent by the refusal: the review still decides.
    const good = await call(app, 'elicit_app_decide', { elicitationId, token, idempotencyKey: 'k-good', decision: 'approved' });
    expect(good.isError).toBeUndefined();
    expect(good.structuredContent).toEqual({ ok: true, status: 'approved' });
  });

  it('a key problem on a request decided in the extension says it was decided there, and when; never "decide this in the extension"', async () => {
    const created = await call(app, 'elicit_approval', { message: 'Rotate the staging keys?', context: { env: 'staging' } });
    const { elicitationId, token } = appKey(created)!;
    await ext!.notice('request.created', (p) => p.request.elicitationId === elicitationId, 10_000);
    const before = Date.now();
    const decided = await ext!.call('decide', { elicitationId, idempotencyKey: 'ext-1', decision: 'rejected' }, 10_000);
    expect(decided.result).toMatchObject({ ok: true });
    const decision = { elicitationId, idempotencyKey: 'k-late', decision: 'approved' };
    for (const args of [decision, { ...decision, token: 'A'.repeat(43) }, { ...decision, token }]) {
      const refused = await call(app, 'elicit_app_decide', args);
      expect(refused.isError, JSON.stringify(args)).toBe(true);
      expect(refused.structuredContent).toEqual({
        error: { code: 'already_decided', field: 'elicitationId', message: expect.stringMatching(/^already decided in the browser extension at \d{4}-\d\d-\d\dT.*Z; its decision stands$/) },
        decided: { via: 'extension', at: expect.any(Number) },
      });
      const at = (refused.structuredContent?.decided as { at: number }).at;
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(JSON.stringify(refused.structuredContent)).not.toContain('Decide this');
    }
    // A pending request still gets the key's own refusal.
    const pending = await call(app, 'elicit_approval', { message: 'Still pending?', context: {} });
    const stillPending = await call(app, 'elicit_app_decide', { ...decision, elicitationId: appKey(pending)!.elicitationId, token: 'A'.repeat(43) });
    expect(stillPending.structuredContent).toEqual({ error: { code: 'token_invalid', field: 'token', message: 'token: not the key of this request' } });
  });

  it('every tool\'s listed schemas follow the Inspector\'s portability rules, as the server lists them over stdio', async () => {
    const { tools } = await app.listTools();
    expect(tools.length).toBeGreaterThan(10);
    for (const tool of tools) {
      expect(portabilityFindings(tool.inputSchema), `${tool.name} inputSchema`).toEqual([]);
      expect(portabilityFindings(tool.outputSchema), `${tool.name} outputSchema`).toEqual([]);
    }
  });
});
