// The MCP tool surface, recorded: `tools/list` and representative `tools/call` results (valid calls and refusals of
// every tool), with every call the tools made of the approval service and every dialog they asked the host for. The
// server runs in this process (`createServer` behind the SDK's `serveStdio`, over an `InMemoryTransport`) against a
// scripted approval service, so a refactor of server/mcp that changes nothing a host or the hub sees passes unchanged.
// Record again (after a change meant to be seen) with UPDATE_SNAPSHOTS=1.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentMethod, Answer, ApprovalService, Params, Result, ServiceError } from '../../shared/peer-calls.js';
import { APP_META_KEY, APP_MIME_TYPE, UI_EXTENSION } from '../../shared/app-surface.js';
import type { Outcome } from '../../shared/lifecycle.js';
import { resultEnvelope, type RequestView, type ReviewRequest } from '../../shared/review-request.js';
import { createServer } from '../../server/mcp/create-server.js';
import type { InitializeCapture } from '../../server/mcp/stdio-tap-transport.js';
import { northmarkProposal } from '../fixtures/northmark.js';

const SNAPSHOT_DIR = fileURLToPath(new URL('./tool-surface/', import.meta.url));
const UPDATE = process.env.UPDATE_SNAPSHOTS === '1';
const STATE_DIR = mkdtempSync(join(tmpdir(), 'elicitly-tool-surface-'));
afterAll(() => rmSync(STATE_DIR, { recursive: true, force: true }));

const CREATED_AT = 1_700_000_000_000;
const EXPIRES_AT = '2030-01-01T00:00:00.000Z';
const APP_CAPABILITIES = { elicitation: { form: {} }, extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };

// --- the scripted approval service ---------------------------------------------------------------------------------

interface FakeOptions {
  /** `reviewer.connected` in create's answer. */
  connected?: boolean;
  /** `paired`'s answer (default 1). */
  paired?: number | null;
  /** How an awaited request ends: decided with this outcome, `expired`, or left pending (default). */
  awaited?: Outcome | 'expired' | 'pending';
  /** A rule decides every request at create (its outcome). */
  rule?: Outcome;
  /** These methods answer this service error. */
  fail?: Partial<Record<AgentMethod, ServiceError>>;
  /** This method throws (a broken relay). */
  throwOn?: AgentMethod;
  /** decide's answer (the app's decision; was `appDecide`). */
  decideAnswer?: Result<'decide'>;
}

interface Stored {
  request: ReviewRequest;
  status: RequestView['status'];
  outcome?: Outcome;
  consumed?: boolean;
}

type Handlers = { [M in AgentMethod]: (params: Params<M>) => Answer<Result<M>> };

const ok = <T>(value: T): Answer<T> => ({ ok: true, value });
const fail = <T>(code: ServiceError['code'], message: string): Answer<T> => ({ ok: false, error: { code, message } });

const APPROVED: Outcome = { decision: 'approved', decidedVia: 'extension', action: 'submit', values: {}, idempotencyKey: 'k-1' };

/** Requests that exist before a scenario starts, by id. */
function seeded(): Map<string, Stored> {
  const approval: ReviewRequest = { kind: 'approval', mode: 'json', message: 'Deploy api?', context: { service: 'api' }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Reject' }, timeoutSeconds: 3600 };
  return new Map<string, Stored>([
    ['el_pending', { request: approval, status: 'pending' }],
    ['el_approved', { request: approval, status: 'approved', outcome: { ...APPROVED, values: { note: 'ok' }, comment: 'fine' } }],
    ['el_rejected', { request: approval, status: 'rejected', outcome: { decision: 'rejected', decidedVia: 'app', action: 'cancel', idempotencyKey: 'k-2' } }],
    ['el_expired', { request: approval, status: 'expired' }],
    ['el_canceled', { request: approval, status: 'canceled' }],
  ]);
}

class FakeApprovals implements ApprovalService {
  readonly calls: { method: AgentMethod; params: unknown }[] = [];
  private readonly requests = seeded();
  private readonly handlers: Handlers;

  constructor(private readonly options: FakeOptions = {}) {
    const stored = (id: string) => this.requests.get(id);
    const missing = (id: string) => fail<never>('not_found', `no request ${id}`);
    this.handlers = {
      create: (params) => {
        const rule = options.rule;
        this.requests.set(params.id, { request: params.request, status: rule ? rule.decision : 'pending', ...(rule ? { outcome: rule } : {}) });
        return ok({
          elicitationId: params.id,
          status: rule ? rule.decision : 'pending',
          ...(rule ? { decidedVia: 'rule' as const, ruleId: 'r_1' } : {}),
          expiresAt: EXPIRES_AT,
          reviewer: { connected: options.connected ?? false },
        });
      },
      status: ({ id }) => {
        const entry = stored(id);
        return entry ? ok({ status: entry.consumed ? 'consumed' : entry.status }) : missing(id);
      },
      await: ({ id }) => {
        const entry = stored(id);
        if (!entry) return missing(id);
        const awaited = options.awaited ?? 'pending';
        if (entry.status === 'pending' && awaited === 'expired') entry.status = 'expired';
        else if (entry.status === 'pending' && typeof awaited === 'object') Object.assign(entry, { status: awaited.decision, outcome: awaited });
        return ok({ status: entry.status });
      },
      result: ({ id }) => {
        const entry = stored(id);
        if (!entry) return missing(id);
        if (entry.status === 'pending') return fail('pending', 'nobody decided yet');
        if (entry.status === 'expired' || entry.status === 'canceled') return fail(entry.status, `the request ${entry.status}`);
        entry.consumed = true;
        return ok(resultEnvelope(entry.request, entry.outcome ?? APPROVED));
      },
      cancel: ({ id }) => {
        const entry = stored(id);
        if (!entry) return missing(id);
        if (entry.status !== 'pending') return fail('already_decided', 'it was decided first');
        entry.status = 'canceled';
        return ok({ status: 'canceled' });
      },
      info: () => ok({ pid: 4242, extensionsConnected: 1, lastSeenAt: CREATED_AT, pending: 2 }),
      paired: () => ok({ paired: options.paired === undefined ? 1 : options.paired }),
      view: ({ id }) => {
        const entry = stored(id);
        if (!entry) return missing(id);
        const { outcome } = entry;
        return ok({
          elicitationId: id,
          kind: entry.request.kind,
          status: entry.status,
          message: entry.request.message,
          createdAt: CREATED_AT,
          expiresAt: CREATED_AT + 3_600_000,
          ...(outcome ? { decidedAt: CREATED_AT + 1000, outcome: { decision: outcome.decision, action: outcome.action, ...(outcome.decidedVia ? { decidedVia: outcome.decidedVia } : {}) } } : {}),
          requester: { client: 'tool-surface', pid: 1 },
          request: entry.request,
          renderedTemplate: null,
        });
      },
      decide: () => ok(options.decideAnswer ?? { ok: true, status: 'approved' }),
      rules: () => ok({ rules: [] }),
      'rule.delete': () => ok({ removed: false }),
      'passkey.info': () => ok({ hub: '0'.repeat(16), require: [], passkeys: [], rpId: null, why: 'the terminal has no authenticator' }),
      'passkey.remove': () => ok({ ok: true, removed: false }),
      'passkey.require': () => ok({ ok: true }),
    };
  }

  async call<M extends AgentMethod>(method: M, params: Params<M>): Promise<Answer<Result<M>>> {
    this.calls.push({ method, params });
    if (this.options.throwOn === method) throw new Error(`the relay broke during ${method}`);
    const failure = this.options.fail?.[method];
    if (failure) return { ok: false, error: failure };
    const handler: Handlers[M] = this.handlers[method];
    return handler(params);
  }
}

// --- the server in this process ------------------------------------------------------------------------------------

/** What the stdio transport keeps of the handshake (`StdioTapTransport.tap`), over an in-memory transport. */
class TapTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  initialize: InitializeCapture | undefined;
  clientCapabilities: unknown;

  constructor(private readonly inner: InMemoryTransport) {
    inner.onmessage = (message) => {
      this.tap(message);
      this.onmessage?.(message);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  private tap(message: JSONRPCMessage): void {
    if (!('method' in message)) return;
    const params = (message.params ?? {}) as Record<string, unknown>;
    if (message.method === 'initialize') {
      this.initialize = { protocolVersion: params.protocolVersion, clientInfo: params.clientInfo, capabilities: params.capabilities };
      this.clientCapabilities ??= params.capabilities;
    } else if (this.clientCapabilities === undefined) {
      const meta = params._meta as Record<string, unknown> | undefined;
      if (meta && CLIENT_CAPABILITIES_META_KEY in meta) this.clientCapabilities = meta[CLIENT_CAPABILITIES_META_KEY];
    }
  }

  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

type HostContent = Record<string, string | number | boolean | string[]>;
type HostAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: HostContent };
type HostScript = (params: { message: string; requestedSchema: Record<string, unknown> }) => Promise<HostAnswer>;

interface Connection {
  client: Client;
  approvals: FakeApprovals;
  elicitations: unknown[];
  close: () => Promise<void>;
}

async function connect(scenario: { era?: '2025' | '2026'; capabilities?: Record<string, unknown>; host?: HostScript; fake?: FakeOptions; role?: 'hub' | 'relay' | 'none'; appSurface?: boolean }): Promise<Connection> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const transport = new TapTransport(serverSide);
  const approvals = new FakeApprovals(scenario.fake);
  const handle = serveStdio(
    (ctx) =>
      createServer(ctx, {
        handshake: () => transport.initialize,
        clientCapabilities: () => transport.clientCapabilities,
        appHtml: async () => '<!doctype html><title>review</title>',
        appSurface: scenario.appSurface ?? true,
        approvals,
        minTimeoutSeconds: 60,
        retentionDays: 7,
        probeTimeoutMs: 2000,
        automaticNoMs: 250,
        companion: { port: 17399, stateDir: STATE_DIR, role: () => scenario.role ?? 'none' },
      }),
    { transport },
  );
  const client = new Client(
    { name: 'tool-surface-host', version: '1.0.0' },
    { capabilities: scenario.capabilities ?? { elicitation: { form: {} } }, versionNegotiation: { mode: scenario.era === '2026' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  const elicitations: unknown[] = [];
  const host = scenario.host;
  if (host) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { message: string; requestedSchema: Record<string, unknown> };
      elicitations.push({ message: params.message, requestedSchema: params.requestedSchema });
      return host(params);
    });
  }
  await client.connect(clientSide);
  return { client, approvals, elicitations, close: async () => (await client.close(), await handle.close()) };
}

// --- what is recorded, with what changes from run to run taken out -------------------------------------------------

const GENERATED_ID = /el_[A-Za-z0-9_-]{16}(?![A-Za-z0-9_-])/g;
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[.-]\d{3}Z/g;

/** Generated ids numbered in order of appearance, times and latencies and the state dir replaced by placeholders. */
function normalizer(): (value: unknown) => unknown {
  const ids = new Map<string, string>();
  const text = (value: string) =>
    value
      .split(STATE_DIR)
      .join('<stateDir>')
      .replace(GENERATED_ID, (id) => {
        if (!ids.has(id)) ids.set(id, `el_<${ids.size + 1}>`);
        return ids.get(id) ?? id;
      })
      .replace(ISO_TIME, '<time>')
      .replace(/doctor-<time>-[0-9a-f]{8}\.json/g, 'doctor-<time>-<random>.json')
      .replace(/ in \d+ ms/g, ' in <n> ms')
      .replace(/"latencyMs": ?\d+/g, '"latencyMs":"<ms>"')
      .replace(/, \d+ ms\)/g, ', <n> ms)');
  const walk = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string') return (key === 'token' && value.length > 20) ? '<token>' : text(value);
    if (typeof value === 'number' && (key === 'latencyMs' || key === 'pid')) return `<${key}>`;
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), walk(v, k)]));
    return value;
  };
  return (value) => walk(value);
}

interface ToolResultLike {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A result as recorded: the text is checked to be the structured content's JSON, and then not repeated. */
function recorded(result: ToolResultLike): Record<string, unknown> {
  const { content, ...rest } = result;
  const only = content?.length === 1 ? (content[0] as { type?: string; text?: string }) : undefined;
  const textIsJson = only?.type === 'text' && result.structuredContent !== undefined && only.text === JSON.stringify(result.structuredContent);
  return { ...(textIsJson ? { content: 'text: the structuredContent as JSON' } : { content }), ...rest };
}

// --- the scenarios -------------------------------------------------------------------------------------------------

interface Created {
  elicitationId: string;
  token: string;
}
type Args = Record<string, unknown> | ((created: Created) => Record<string, unknown>);

interface Scenario {
  name: string;
  era?: '2025' | '2026';
  capabilities?: Record<string, unknown>;
  host?: HostScript;
  fake?: FakeOptions;
  role?: 'hub' | 'relay' | 'none';
  calls: [tool: string, args: Args][];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const accept = (content: (schema: Record<string, unknown>) => HostContent): HostScript => async (params) => ({ action: 'accept', content: content(params.requestedSchema) });
const answerAfter = (ms: number, action: 'decline' | 'cancel'): HostScript => async () => (await sleep(ms), { action });
const throws: HostScript = async () => {
  throw new Error('this host cannot show forms');
};
const selectionType = (schema: Record<string, unknown>) => (schema.properties as { selection?: { type?: string } } | undefined)?.selection?.type;

const FORM = { type: 'object', properties: { version: { type: 'string', title: 'Version' }, count: { type: 'integer', minimum: 1 } }, required: ['version'] };
const OPTIONS = [{ value: 'red', label: 'Red', description: 'warm' }, { value: 'blue', label: 'Blue' }];
const NO_DIALOG = { capabilities: {} };
const fromApp = (created: Created, extra: Record<string, unknown> = {}) => ({ elicitationId: created.elicitationId, idempotencyKey: 'k-app-1', decision: 'approved', ...extra });

const SCENARIOS: Record<string, Scenario[]> = {
  'id-tools': [
    { name: 'status of a pending, a decided and an unknown request', calls: [['elicit_status', { elicitationId: 'el_pending' }], ['elicit_status', { elicitationId: 'el_approved' }], ['elicit_status', { elicitationId: 'el_nope' }]] },
    { name: 'status refusals: input schema (type, extra field, empty)', calls: [['elicit_status', { elicitationId: 7 }], ['elicit_status', { elicitationId: 'el_pending', extra: true }], ['elicit_status', { elicitationId: '   ' }]] },
    { name: 'status when the hub is unavailable', fake: { fail: { status: { code: 'unavailable', message: 'the hub went away' } } }, calls: [['elicit_status', { elicitationId: 'el_pending' }]] },
    { name: 'status when the service throws', fake: { throwOn: 'status' }, calls: [['elicit_status', { elicitationId: 'el_pending' }]] },
    { name: 'result of an approved, a rejected, a pending, an expired and a canceled request', calls: [['elicit_result', { elicitationId: 'el_approved' }], ['elicit_result', { elicitationId: 'el_rejected' }], ['elicit_result', { elicitationId: 'el_pending' }], ['elicit_result', { elicitationId: 'el_expired' }], ['elicit_result', { elicitationId: 'el_canceled' }]] },
    { name: 'result refusal: no id', calls: [['elicit_result', {}]] },
    { name: 'cancel: pending, decided, unknown, refused input', calls: [['elicit_cancel', { elicitationId: 'el_pending' }], ['elicit_cancel', { elicitationId: 'el_approved' }], ['elicit_cancel', { elicitationId: 'el_nope' }], ['elicit_cancel', { id: 'el_pending' }]] },
    { name: 'cancel over the limit', fake: { fail: { cancel: { code: 'limit', message: 'too many' } } }, calls: [['elicit_cancel', { elicitationId: 'el_pending' }]] },
    { name: 'await: still pending, clamped wait', calls: [['elicit_await', { elicitationId: 'el_pending', waitSeconds: 0 }], ['elicit_await', { elicitationId: 'el_pending', waitSeconds: 9999 }]] },
    { name: 'await: decided, then read', fake: { awaited: APPROVED }, calls: [['elicit_await', { elicitationId: 'el_pending' }], ['elicit_result', { elicitationId: 'el_pending' }], ['elicit_status', { elicitationId: 'el_pending' }]] },
    { name: 'await refusals', calls: [['elicit_await', { elicitationId: '' }], ['elicit_await', { elicitationId: 'el_pending', waitSeconds: 'long' }], ['elicit_await', { elicitationId: 'el_nope', waitSeconds: 1 }]] },
  ],
  'approvals': [
    { name: 'approval, json mode', calls: [['elicit_approval', { message: 'Deploy api to production?', context: { service: 'api', version: '1.2.3' }, timeoutSeconds: 120 }]] },
    { name: 'approval, form mode with labels, reviewer connected', fake: { connected: true }, calls: [['elicit_approval', { message: 'Pick a version', requestedSchema: FORM, labels: { ok: 'Ship', cancel: 'Hold' } }]] },
    { name: 'approval with a template', calls: [['elicit_approval', { message: 'Deploy?', context: { service: 'api' }, displayTemplate: '<b>{{ context.service }}</b>' }]] },
    { name: 'approval with a template LiquidJS refuses', calls: [['elicit_approval', { message: 'Deploy?', context: {}, displayTemplate: '{% if %}' }]] },
    { name: 'approval refusals: schema outside the subset, unknown field, bad surfaces, no message', calls: [['elicit_approval', { message: 'm', requestedSchema: { type: 'object', properties: { a: { type: 'object', properties: {} } } } }], ['elicit_approval', { message: 'm', bogus: 1 }], ['elicit_approval', { message: 'm', surfaces: ['app'] }], ['elicit_approval', {}]] },
    { name: 'approval: the hub refuses (limit)', fake: { fail: { create: { code: 'limit', message: '10,000 requests are pending' } } }, calls: [['elicit_approval', { message: 'Deploy?', context: {} }]] },
    { name: 'approval: service throws', fake: { throwOn: 'create' }, calls: [['elicit_approval', { message: 'Deploy?', context: {} }]] },
    { name: 'proposal, valid', calls: [['elicit_proposal', structuredClone(northmarkProposal)]] },
    { name: 'proposal refusals: unknown field, missing columns', calls: [['elicit_proposal', { ...structuredClone(northmarkProposal), fields: { ...northmarkProposal.fields, nope: { sources: {} } } }], ['elicit_proposal', { message: 'm', requestedSchema: {}, fields: {} }]] },
  ],
  'asks': [
    { name: 'confirm in the host dialog: yes', host: accept(() => ({ answer: 'yes' })), calls: [['elicit_confirm', { question: 'Delete the branch?', yesLabel: 'Delete', noLabel: 'Keep' }]] },
    { name: 'confirm in the host dialog, public shape: declined at a human pace', host: answerAfter(300, 'decline'), calls: [['elicit_confirm', { message: 'Go on?', labels: { ok: 'Sí', cancel: 'No' } }]] },
    { name: 'confirm refusals', calls: [['elicit_confirm', {}], ['elicit_confirm', { question: 'q', yesLabel: 'x'.repeat(41) }], ['elicit_confirm', { question: 'q', labels: { ok: 'a' } }]] },
    { name: 'confirm: the host auto-declines, then nothing is paired', host: answerAfter(0, 'cancel'), fake: { paired: 0 }, calls: [['elicit_confirm', { question: 'Proceed?' }], ['elicit_confirm', { question: 'Again?' }]] },
    { name: 'confirm: the host dialog throws, then goes to the extension (nobody connected)', host: throws, calls: [['elicit_confirm', { question: 'Proceed?', timeoutSeconds: 30 }]] },
    { name: 'confirm via extension: connected, answered', fake: { connected: true, awaited: { ...APPROVED, values: { confirmed: true } } }, calls: [['elicit_confirm', { question: 'Proceed?', via: 'extension', waitSeconds: 5 }]] },
    { name: 'confirm via extension: connected, no answer yet', fake: { connected: true }, calls: [['elicit_confirm', { question: 'Proceed?', via: 'extension', waitSeconds: 1 }]] },
    { name: 'confirm via extension: a rule answers at create', fake: { rule: { ...APPROVED, decidedVia: 'rule', values: { confirmed: true } } }, calls: [['elicit_confirm', { question: 'Proceed?', via: 'extension' }]] },
    { name: 'confirm: no dialog advertised, hub refuses create', ...NO_DIALOG, fake: { fail: { create: { code: 'unavailable', message: 'no hub' } } }, calls: [['elicit_confirm', { question: 'Proceed?' }]] },
    { name: 'form in the host dialog: accepted', host: accept(() => ({ version: '2.0.0', count: 3 })), calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM }]] },
    { name: 'form in the host dialog: content the schema refuses', host: accept(() => ({ count: 'three' })), calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM, via: 'host' }]] },
    { name: 'form refusals', calls: [['elicit_form', { message: 'm', requestedSchema: { type: 'object', properties: { a: { type: 'object', properties: {} } } } }], ['elicit_form', { requestedSchema: FORM }], ['elicit_form', { message: 'x'.repeat(70_000), requestedSchema: FORM }]] },
    { name: 'form via extension: expired while waiting', fake: { connected: true, awaited: 'expired' }, calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM, via: 'extension' }]] },
    { name: 'form via extension: answered', fake: { connected: true, awaited: { ...APPROVED, values: { version: '3.1.0' } } }, calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM, via: 'extension' }]] },
    { name: 'form, no dialog advertised: nobody connected', ...NO_DIALOG, calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM }]] },
    { name: 'selection in the host dialog: one and several', host: accept((schema) => ({ selection: selectionType(schema) === 'array' ? ['red', 'blue'] : 'blue' })), calls: [['elicit_selection', { message: 'Which color?', options: OPTIONS }], ['elicit_selection', { message: 'Which colors?', options: OPTIONS, multiple: true, default: ['red'] }]] },
    { name: 'selection in the host dialog: accepted without a choice', host: accept(() => ({})), calls: [['elicit_selection', { message: 'Which color?', options: OPTIONS, via: 'host' }]] },
    { name: 'selection refusals', calls: [['elicit_selection', { message: 'm', options: [{ value: 'a' }, { value: 'a' }] }], ['elicit_selection', { message: 'm', options: [] }], ['elicit_selection', { message: 'm', options: OPTIONS, multiple: true, minSelected: 3 }]] },
    { name: 'selection via extension: rejected', fake: { connected: true, awaited: { decision: 'rejected', decidedVia: 'extension', action: 'cancel', idempotencyKey: 'k-3' } }, calls: [['elicit_selection', { message: 'Which color?', options: OPTIONS, via: 'extension' }]] },
    { name: 'asks in the 2026-07-28 era: host dialog through input_required', era: '2026', host: accept(() => ({ answer: 'no' })), calls: [['elicit_confirm', { question: 'Proceed?' }]] },
    { name: 'form in the 2026-07-28 era, host dialog', era: '2026', host: accept(() => ({ version: '9' })), calls: [['elicit_form', { message: 'Which version?', requestedSchema: FORM }]] },
  ],
  'doctor': [
    { name: 'doctor, plain', calls: [['elicit_doctor', {}]] },
    { name: 'doctor, no dialog advertised, companion checked', ...NO_DIALOG, role: 'relay', calls: [['elicit_doctor', { checkCompanion: true }]] },
    { name: 'doctor probe: accepted, then routing', host: accept(() => ({ probe: 'ok' })), calls: [['elicit_doctor', { probeElicitation: true }]] },
    { name: 'doctor probe: auto-declined, later asks go to the extension', host: answerAfter(0, 'decline'), fake: { paired: 0 }, calls: [['elicit_doctor', { probe_elicitation: true }], ['elicit_confirm', { question: 'Proceed?' }]] },
    { name: 'doctor probe: auto-accepted without the choice', host: accept(() => ({})), calls: [['elicit_doctor', { probeElicitation: true }]] },
    { name: 'doctor share', calls: [['elicit_doctor', { share: true, productName: 'Tool Surface', productVersion: '1', notes: 'in process' }]] },
    { name: 'doctor refusals', calls: [['elicit_doctor', { share: true, productName: 'x'.repeat(101) }], ['elicit_doctor', { probe: true }]] },
    { name: 'doctor, 2026-07-28 era', era: '2026', calls: [['elicit_doctor', {}]] },
    { name: 'doctor in a chat that renders apps', capabilities: APP_CAPABILITIES, calls: [['elicit_doctor', {}]] },
  ],
  'app': [
    {
      name: 'a chat that renders apps: create, view, decide, spend',
      capabilities: APP_CAPABILITIES,
      calls: [
        ['elicit_approval', { message: 'Deploy api?', context: { service: 'api' } }],
        ['elicit_app_view', (c) => ({ elicitationId: c.elicitationId })],
        ['elicit_app_decide', (c) => fromApp(c)],
        ['elicit_app_decide', (c) => fromApp(c, { token: 'x'.repeat(43) })],
        ['elicit_app_decide', (c) => fromApp(c, { token: c.token })],
        ['elicit_app_decide', (c) => fromApp(c, { token: c.token })],
      ],
    },
    {
      name: 'app refusals: not created here, input schema, kept to the extension',
      capabilities: APP_CAPABILITIES,
      calls: [
        ['elicit_app_view', { elicitationId: 'el_pending' }],
        ['elicit_app_view', {}],
        ['elicit_app_decide', { elicitationId: 'el_pending', idempotencyKey: 'k', decision: 'approved', token: 'x' }],
        ['elicit_app_decide', { elicitationId: 'el_pending', decision: 'maybe' }],
        ['elicit_approval', { message: 'Deploy?', context: 1, surfaces: ['extension'] }],
        ['elicit_app_view', (c) => ({ elicitationId: c.elicitationId })],
      ],
    },
    {
      name: 'app decide refused: decided first in the extension',
      capabilities: APP_CAPABILITIES,
      fake: { decideAnswer: { ok: false, reason: 'already_decided' }, awaited: APPROVED },
      calls: [
        ['elicit_proposal', structuredClone(northmarkProposal)],
        ['elicit_await', (c) => ({ elicitationId: c.elicitationId })],
        ['elicit_app_decide', (c) => fromApp(c, { token: c.token })],
        ['elicit_app_decide', (c) => fromApp(c, { token: c.token })],
        ['elicit_app_view', (c) => ({ elicitationId: c.elicitationId })],
      ],
    },
    { name: 'app: an ask in a chat that renders apps (nobody connected)', capabilities: { extensions: APP_CAPABILITIES.extensions }, calls: [['elicit_confirm', { question: 'Proceed?' }]] },
    { name: 'app: the hub is unavailable', capabilities: APP_CAPABILITIES, fake: { fail: { view: { code: 'unavailable', message: 'gone' }, decide: { code: 'unavailable', message: 'gone' } } }, calls: [['elicit_approval', { message: 'Deploy?', context: 'x' }], ['elicit_app_view', (c) => ({ elicitationId: c.elicitationId })], ['elicit_app_decide', (c) => fromApp(c, { token: c.token })]] },
    { name: 'an unknown tool', calls: [['elicit_nothing', {}]] },
  ],
};

async function run(scenario: Scenario): Promise<Record<string, unknown>> {
  const normalize = normalizer();
  const connection = await connect(scenario);
  const created: Created = { elicitationId: '', token: '' };
  const calls: unknown[] = [];
  try {
    for (const [tool, args] of scenario.calls) {
      const given = typeof args === 'function' ? args(created) : args;
      let outcome: Record<string, unknown>;
      try {
        const result = (await connection.client.callTool({ name: tool, arguments: given })) as ToolResultLike;
        const key = result._meta?.[APP_META_KEY] as Partial<Created> | undefined;
        const id = key?.elicitationId ?? (result.structuredContent as { elicitationId?: unknown } | undefined)?.elicitationId;
        if (typeof id === 'string') Object.assign(created, { elicitationId: id, token: key?.token ?? '' });
        outcome = recorded(result);
      } catch (error) {
        outcome = { thrown: error instanceof Error ? error.message : String(error) };
      }
      calls.push({ tool, args: given, ...outcome });
    }
  } finally {
    await connection.close();
  }
  return normalize({ scenario: scenario.name, calls, approvals: connection.approvals.calls, hostDialogs: connection.elicitations }) as Record<string, unknown>;
}

async function listTools(scenario: Pick<Scenario, 'era' | 'capabilities'> & { appSurface?: boolean }): Promise<unknown> {
  const connection = await connect(scenario);
  try {
    return (await connection.client.listTools()).tools;
  } finally {
    await connection.close();
  }
}

/** Compares with the recorded file, or records it with UPDATE_SNAPSHOTS=1. */
function matchesRecord(name: string, actual: unknown): void {
  const file = join(SNAPSHOT_DIR, `${name}.json`);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) {
    mkdirSync(SNAPSHOT_DIR, { recursive: true });
    writeFileSync(file, text);
    return;
  }
  expect(existsSync(file), `${file} is not recorded yet: run with UPDATE_SNAPSHOTS=1`).toBe(true);
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}

describe('the tool surface, recorded', () => {
  it('tools/list: 2025, 2025 in a chat that renders apps, 2026-07-28', async () => {
    matchesRecord('tools-list', {
      '2025': await listTools({}),
      '2025-apps': await listTools({ capabilities: APP_CAPABILITIES }),
      '2026-07-28': await listTools({ era: '2026' }),
    });
  });

  it.each(Object.keys(SCENARIOS))('tools/call: %s', async (group) => {
    const records: unknown[] = [];
    for (const scenario of SCENARIOS[group] ?? []) records.push(await run(scenario));
    matchesRecord(group, records);
  });
});

describe('protocol 9 at the tool surface', () => {
  it('a process whose hub is on another machine (no app surface) lists to a chat that renders apps what it lists to any other', async () => {
    expect(await listTools({ capabilities: APP_CAPABILITIES, appSurface: false })).toEqual(await listTools({}));
  });

  it.each<[ServiceError['code'], RegExp]>([
    ['forbidden', /key list/],
    ['unknown_method', /same elicitly-companion version/],
    ['rate_limited', /Slow down/],
  ])('a hub refusing a call as %s is an actionable isError result naming the code', async (code, hint) => {
    const connection = await connect({ fake: { fail: { status: { code, message: 'refused by the hub' } } } });
    try {
      const result = (await connection.client.callTool({ name: 'elicit_status', arguments: { elicitationId: 'el_pending' } })) as ToolResultLike;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: code, message: 'refused by the hub', hint: expect.stringMatching(hint) });
    } finally {
      await connection.close();
    }
  });
});
