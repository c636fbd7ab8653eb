// Every refusal of every tool, as real clients read it: a v1 SDK client (1.32) checks `structuredContent` against the
// tool's advertised outputSchema even on an `isError` result and throws -32602 when it does not fit; the v2 client does
// not check error results, so it alone would hide that. Each refusal must therefore carry `structuredContent`, the same
// JSON as its text, and fit the outputSchema the tool lists: for both the tool's own checks and the input schema's.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_META_KEY, APP_MIME_TYPE, UI_EXTENSION } from '../../shared/app-surface.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import type { ClientKind, Harness, ToolResult } from '../helpers/mcp-harness.js';
import { CLIENT_KINDS, connect } from '../helpers/mcp-harness.js';

const CAPABILITIES = { elicitation: { form: {} }, extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const FORM = { type: 'object', properties: { a: { type: 'object', properties: {} } } };
const NOPE = 'el_nope';
const decide = (elicitationId: string, token?: string) => ({ elicitationId, idempotencyKey: 'k-refusal-1', decision: 'approved', ...(token === undefined ? {} : { token }) });

/** tool, what is wrong, the refusal's code, arguments (`created`: an approval this connection created for review in the chat). */
type Case = [tool: string, wrong: string, code: string, args: (created: string) => Record<string, unknown>];
const CASES: Case[] = [
  ['elicit_app_decide', 'no key', 'token_missing', (id) => decide(id)],
  ['elicit_app_decide', 'a wrong key', 'token_invalid', (id) => decide(id, 'x'.repeat(43))],
  ['elicit_app_decide', 'an id not created in this chat', 'not_in_app', () => decide(NOPE, 'x'.repeat(43))],
  ['elicit_app_decide', 'arguments its input schema refuses', 'invalid_arguments', (id) => ({ elicitationId: id, decision: 'maybe' })],
  ['elicit_app_view', 'an id not created in this chat', 'not_in_app', () => ({ elicitationId: NOPE })],
  ['elicit_app_view', 'arguments its input schema refuses', 'invalid_arguments', () => ({})],
  ['elicit_approval', 'a requestedSchema outside the subset', 'invalid_arguments', () => ({ message: 'm', requestedSchema: FORM })],
  ['elicit_approval', 'arguments its input schema refuses', 'invalid_arguments', () => ({ message: 'm', bogus: 1 })],
  // A lone surrogate is valid JSON but no text: it has no canonical form, so no hash for the ledger (shared/well-formed.ts).
  ['elicit_approval', 'a lone surrogate in its context', 'invalid', () => JSON.parse('{"message":"m","context":{"note":"\\ud800"}}') as Record<string, unknown>],
  ['elicit_approval', 'assurance "passkey" while the person has no passkey', 'invalid', () => ({ message: 'm', context: { a: 1 }, assurance: 'passkey' })],
  ['elicit_await', 'an unknown id', 'not_found', () => ({ elicitationId: NOPE, waitSeconds: 1 })],
  ['elicit_await', 'arguments its input schema refuses', 'invalid_arguments', () => ({ elicitationId: '' })],
  ['elicit_cancel', 'an unknown id', 'not_found', () => ({ elicitationId: NOPE })],
  ['elicit_confirm', 'no question', 'invalid_arguments', () => ({})],
  ['elicit_confirm', 'arguments its input schema refuses', 'invalid_arguments', () => ({ question: 'q', yesLabel: 'x'.repeat(41) })],
  ['elicit_doctor', 'arguments its input schema refuses', 'invalid_arguments', () => ({ share: true, productName: 'x'.repeat(101) })],
  ['elicit_form', 'a requestedSchema outside the subset', 'invalid_arguments', () => ({ message: 'm', requestedSchema: FORM })],
  ['elicit_form', 'arguments its input schema refuses', 'invalid_arguments', () => ({ requestedSchema: FORM })],
  ['elicit_proposal', 'a field its requestedSchema lacks', 'invalid_arguments', () => ({ ...structuredClone(northmarkProposal), fields: { ...northmarkProposal.fields, nope: { sources: {} } } })],
  ['elicit_result', 'an unknown id', 'not_found', () => ({ elicitationId: NOPE })],
  ['elicit_selection', 'repeated option values', 'invalid_arguments', () => ({ message: 'm', options: [{ value: 'a' }, { value: 'a' }] })],
  ['elicit_selection', 'arguments its input schema refuses', 'invalid_arguments', () => ({ message: 'm', options: [] })],
  ['elicit_status', 'an unknown id', 'not_found', () => ({ elicitationId: NOPE })],
  ['elicit_status', 'arguments its input schema refuses', 'invalid_arguments', () => ({ elicitationId: 7 })],
];

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const text = (result: ToolResult) => (result.content?.[0] as { type: string; text: string } | undefined)?.text ?? '';

describe.each<ClientKind>(CLIENT_KINDS)('every refusal of every tool, %s client', (kind) => {
  let h: Harness;
  let outputSchemas: Map<string, Record<string, unknown>>;
  let created: string;

  beforeAll(async () => {
    h = await connect(kind, { capabilities: CAPABILITIES, inProcess: true });
    outputSchemas = new Map((await h.listTools()).map((t) => [t.name, t.outputSchema ?? {}]));
    // A request created for review in this chat: the app-only tools refuse it without its key, or with another.
    const approval = await h.callTool('elicit_approval', { message: 'Deploy?', context: { service: 'api' } });
    const key = approval._meta?.[APP_META_KEY] as { elicitationId: string } | undefined;
    expect(key?.elicitationId).toEqual(expect.any(String));
    created = key?.elicitationId ?? '';
  });
  afterAll(() => h?.close());

  it('the table provokes a refusal from every tool the server lists', () => {
    expect([...new Set(CASES.map(([tool]) => tool))]).toEqual([...outputSchemas.keys()]);
  });

  it.each(CASES)('%s, %s: isError with structuredContent, the same JSON as text, that fits the listed outputSchema', async (tool, _wrong, code, args) => {
    const result = await h.callTool(tool, args(created));
    expect(result.isError, text(result)).toBe(true);
    expect(result.structuredContent, text(result)).toBeDefined();
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);
    // The app-only tools name the field for the view ({ error: { code, field, message } }); the others, { error: code }.
    const error = result.structuredContent?.error;
    expect(typeof error === 'object' && error !== null && 'code' in error ? error.code : error).toBe(code);
    const validate = ajv.compile(outputSchemas.get(tool) ?? {});
    expect(validate(result.structuredContent), ajv.errorsText(validate.errors)).toBe(true);
  });
});
