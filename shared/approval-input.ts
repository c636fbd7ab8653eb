// Tool inputs of the approval family (elicit_proposal, elicit_approval): the check the server
// runs before storing a request, and the check of a reviewer's decision against that request.
// Shared by the Node server and the browser extension, so it imports nothing but zod and shared/.
import * as z from 'zod';
import { AssuranceSchema } from './passkey-wire.js';
import { duplicateOf, fromZod, isObject, issue, list, quote, wrongType, type FieldIssue } from './field-issues.js';
import { clamp } from './limits.js';
import { RequestedSchemaSchema, checkRequestedSchema, duplicates, validateValues, type RequestedSchema } from './requested-schema.js';

// server/mcp/tools/tool.ts still imports it from here; its owner moves it to field-issues.ts.

/**
 * `depth`: arrays and objects nested in one another. Real records are a few levels deep; thousands of levels made the
 * extension's IndexedDB write (a recursive clone) fail with "Maximum call stack" and block every later request.
 */
export const LIMITS = { templateBytes: 16 * 1024, contextBytes: 64 * 1024, requestBytes: 512 * 1024, depth: 32 } as const;

const TIMEOUT = { fallback: 3600, min: 60, max: 86_400 } as const;
const PROPOSAL_LABELS = { ok: 'Submit Changes', cancel: 'Cancel' } as const;
const APPROVAL_LABELS = { ok: 'Approve', cancel: 'Decline' } as const;

const Message = z.string().trim().min(1).max(4000);
const Label = z.string().trim().min(1).max(40);

const LabelsSchema = z.strictObject({ ok: Label.optional(), cancel: Label.optional() });

const ColumnsSchema = z
  .strictObject({
    sources: z.array(z.strictObject({ key: z.string().min(1), label: z.string().trim().min(1) })).min(1),
    current: z.strictObject({ label: z.string().min(1) }),
  })
  .superRefine((c, ctx) => {
    // zod drops a "__proto__" key from every record it parses, so fields[k].sources.__proto__ would vanish: refuse it.
    c.sources.forEach((s, i) => {
      if (s.key === '__proto__') ctx.addIssue({ code: 'custom', path: ['sources', i, 'key'], message: '"__proto__" cannot name a column; choose another key', params: { rule: 'reserved_name' } });
    });
    // Keys address fields[k].sources, and two columns with one header would be indistinguishable.
    for (const field of ['key', 'label'] as const) {
      for (const [i, first] of duplicates(c.sources.map((s) => s[field]))) {
        const message = duplicateOf(c.sources[i]?.[field], `columns.sources[${first}].${field}`);
        ctx.addIssue({ code: 'custom', path: ['sources', i, field], message, params: { rule: 'duplicate' } });
      }
    }
  });

const ProposalFieldSchema = z.strictObject({
  sources: z.record(z.string(), z.unknown()).optional(),
  current: z.unknown().optional(),
  include: z.boolean().optional(),
});

export const ElicitProposalInputSchema = z.strictObject({
  message: Message,
  columns: ColumnsSchema,
  requestedSchema: z.record(z.string(), z.unknown()),
  fields: z.record(z.string(), ProposalFieldSchema),
  context: z.unknown().optional(),
  displayTemplate: z.string().optional(),
  labels: LabelsSchema.optional(),
  timeoutSeconds: z.number().optional(),
  /** Where the request may be decided (default both); checked by `checkSurfaces` in app-surface.ts. */
  surfaces: z.array(z.enum(['extension', 'app'])).optional(),
  /**
   * "passkey": only a decision the person signs with one of their registered passkeys counts (in the browser extension
   * or the phone page, never the chat); the receipt then carries the signature. Refused when they have none.
   */
  assurance: AssuranceSchema.optional(),
});
export type ElicitProposalInput = z.infer<typeof ElicitProposalInputSchema>;

export const ElicitApprovalInputSchema = z.strictObject({
  message: Message,
  context: z.unknown().optional(),
  requestedSchema: z.record(z.string(), z.unknown()).optional(),
  displayTemplate: z.string().optional(),
  labels: LabelsSchema.optional(),
  timeoutSeconds: z.number().optional(),
  /** Where the request may be decided (default both); checked by `checkSurfaces` in app-surface.ts. */
  surfaces: z.array(z.enum(['extension', 'app'])).optional(),
  /**
   * "passkey": only a decision the person signs with one of their registered passkeys counts (in the browser extension
   * or the phone page, never the chat); the receipt then carries the signature. Refused when they have none.
   */
  assurance: AssuranceSchema.optional(),
});

const ReviewLabelsSchema = z.strictObject({ ok: z.string().min(1), cancel: z.string().min(1) });
export type ReviewLabels = z.infer<typeof ReviewLabelsSchema>;

/** A proposal's field as stored: sources keyed by column, the Current value (null when blank), an include override. */
const StoredProposalFieldSchema = z.strictObject({
  sources: z.record(z.string(), z.unknown()),
  current: z.unknown(),
  include: z.boolean().optional(),
});
type ProposalField = z.infer<typeof StoredProposalFieldSchema>;

/**
 * The normalized request that gets stored, relayed and sent to the reviewer: one schema for the server's records, the
 * relay's `create`, the wire's request views and the extension's rows.
 */
export const ProposalRequestSchema = z.strictObject({
  kind: z.literal('proposal'),
  message: z.string(),
  columns: ColumnsSchema,
  requestedSchema: RequestedSchemaSchema,
  /** A property absent here is a proposed-only field: blank Source and Current cells. */
  fields: z.record(z.string(), StoredProposalFieldSchema),
  /** null when the caller gave none. */
  context: z.unknown(),
  labels: ReviewLabelsSchema,
  timeoutSeconds: z.number(),
});
export type ProposalRequest = z.infer<typeof ProposalRequestSchema>;

export const ApprovalRequestSchema = z.strictObject({
  kind: z.literal('approval'),
  mode: z.enum(['json', 'form', 'both']),
  message: z.string(),
  /** null when the caller gave none. */
  context: z.unknown(),
  requestedSchema: RequestedSchemaSchema.nullable(),
  labels: ReviewLabelsSchema,
  timeoutSeconds: z.number(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/** The two kinds an agent asks through elicit_proposal and elicit_approval (the ask kinds are in `ask-input.ts`). */
export type ReviewedRequest = ProposalRequest | ApprovalRequest;

type Checked<T> = { ok: true; request: T; displayTemplate: string | null } | { ok: false; issues: FieldIssue[] };

const encoder = new TextEncoder();

/** UTF-8 bytes of the JSON text of `value`; 0 for undefined, which JSON cannot carry. */
export function byteLength(value: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // Cyclic or BigInt values cannot come from a JSON-RPC body; refuse them as unboundedly large.
    return Number.POSITIVE_INFINITY;
  }
  return text === undefined ? 0 : encoder.encode(text).length;
}

/**
 * How deep arrays and objects nest in `value` (a scalar is 0), counted without recursion so that a hostile input cannot
 * exhaust the stack; it stops looking once it is past `stopAbove`.
 */
export function nestingDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, here]);
  }
  return deepest;
}

/**
 * The one size cap of a request, whatever its kind (approval, proposal, confirm, form, selection): the hub checks it on
 * every create, and the tools check it first so the refusal comes before any other work. The refusal names the
 * top-level field that holds most of the bytes, since that is the one to cut.
 */
export function requestSizeIssues(request: unknown): FieldIssue[] {
  const size = byteLength(request);
  if (size <= LIMITS.requestBytes) return [];
  let largest: { key: string; bytes: number } | undefined;
  if (isObject(request)) {
    for (const [key, value] of Object.entries(request)) {
      const bytes = byteLength(value);
      if (!largest || bytes > largest.bytes) largest = { key, bytes };
    }
  }
  const field = largest ? ` (${largest.bytes} of them in this field)` : '';
  return [issue(largest ? [largest.key] : [], 'too_large', `the request serializes to ${size} bytes of JSON${field}; the limit is ${LIMITS.requestBytes} bytes`)];
}

function limitIssues(input: Record<string, unknown>): FieldIssue[] {
  const out: FieldIssue[] = [];
  const template = input.displayTemplate;
  if (typeof template === 'string') {
    const size = encoder.encode(template).length;
    if (size > LIMITS.templateBytes) out.push(issue(['displayTemplate'], 'too_large', `is ${size} bytes; the limit is ${LIMITS.templateBytes} bytes (UTF-8)`));
  }
  if (input.context !== undefined) {
    const size = byteLength(input.context);
    if (size > LIMITS.contextBytes) out.push(issue(['context'], 'too_large', `serializes to ${size} bytes of JSON; the limit is ${LIMITS.contextBytes} bytes`));
  }
  return out;
}

type Parsed<T> = { ok: true; data: T; schema: RequestedSchema | null; issues: FieldIssue[] } | { ok: false; issues: FieldIssue[] };

// Shared front half: request size, zod shape, the requestedSchema subset, template/context size.
function parseCommon<T>(zodSchema: z.ZodType<T>, input: unknown): Parsed<T> {
  if (!isObject(input)) return { ok: false, issues: [issue([], 'not_object', wrongType('an object of named parameters', input))] };
  // Checked first, and without recursion: everything after (sizes, zod, storage in the extension) walks the value.
  const tooDeep = Object.entries(input).flatMap(([key, value]) => {
    const depth = nestingDepth(value, LIMITS.depth);
    return depth > LIMITS.depth ? [issue([key], 'too_deep', `nests arrays and objects more than ${LIMITS.depth} levels deep; the limit is ${LIMITS.depth}`)] : [];
  });
  if (tooDeep.length > 0) return { ok: false, issues: tooDeep };
  const tooLarge = requestSizeIssues(input);
  if (tooLarge.length > 0) return { ok: false, issues: tooLarge };
  const issues = limitIssues(input);
  const parsed = zodSchema.safeParse(input);
  const rawSchema = input.requestedSchema;
  if (!parsed.success) {
    // checkRequestedSchema explains a bad requestedSchema better than the record check does.
    const own = parsed.error.issues.filter((i) => rawSchema === undefined || i.path[0] !== 'requestedSchema');
    issues.push(...fromZod(zodSchema, own, input));
  }
  let schema: RequestedSchema | null = null;
  if (rawSchema !== undefined) {
    const checked = checkRequestedSchema(rawSchema, 'requestedSchema');
    if (checked.ok) schema = checked.schema;
    else issues.push(...checked.issues);
  }
  if (!parsed.success || issues.length) return { ok: false, issues };
  return { ok: true, data: parsed.data, schema, issues };
}

function timeout(seconds: number | undefined): number {
  return clamp(seconds, TIMEOUT.fallback, TIMEOUT.min, TIMEOUT.max);
}

export function checkProposalInput(input: unknown): Checked<ProposalRequest> {
  const parsed = parseCommon(ElicitProposalInputSchema, input);
  if (!parsed.ok) return parsed;
  const { data } = parsed;
  const schema = parsed.schema;
  if (!schema) return { ok: false, issues: [issue(['requestedSchema'], 'missing', 'is required')] };
  const properties = Object.keys(schema.properties);
  const sourceKeys = data.columns.sources.map((s) => s.key);
  const knownSources = new Set(sourceKeys);
  const issues: FieldIssue[] = [];
  const fields: Record<string, ProposalField> = {};
  for (const [key, field] of Object.entries(data.fields)) {
    if (!Object.hasOwn(schema.properties, key)) {
      issues.push(issue(['fields', key], 'unknown_field', `is not a property of requestedSchema (properties: ${list(properties)})`));
      continue;
    }
    const sources = field.sources ?? {};
    for (const s of Object.keys(sources)) {
      if (knownSources.has(s)) continue;
      issues.push(issue(['fields', key, 'sources', s], 'unknown_source', `is not a key of columns.sources (sources: ${list(sourceKeys)})`));
    }
    fields[key] = { sources, current: field.current ?? null, ...(field.include === undefined ? {} : { include: field.include }) };
  }
  if (issues.length) return { ok: false, issues };
  return {
    ok: true,
    displayTemplate: data.displayTemplate ?? null,
    request: {
      kind: 'proposal',
      message: data.message,
      columns: data.columns,
      requestedSchema: schema,
      fields,
      context: data.context ?? null,
      labels: { ...PROPOSAL_LABELS, ...data.labels },
      timeoutSeconds: timeout(data.timeoutSeconds),
    },
  };
}

export function checkApprovalInput(input: unknown): Checked<ApprovalRequest> {
  const parsed = parseCommon(ElicitApprovalInputSchema, input);
  if (!parsed.ok) {
    // A request refused before its shape was read (too large, not an object) gets no further advice.
    const early = parsed.issues.length === 1 && parsed.issues[0]?.path === '(request)';
    if (isObject(input) && !early) parsed.issues.push(...needsContent(input));
    return parsed;
  }
  const { data, schema } = parsed;
  const missing = needsContent(data);
  if (missing.length) return { ok: false, issues: missing };
  // null context is what absence normalizes to, so it cannot on its own make a json-mode request.
  const hasContext = data.context !== undefined && data.context !== null;
  return {
    ok: true,
    displayTemplate: data.displayTemplate ?? null,
    request: {
      kind: 'approval',
      mode: hasContext && schema ? 'both' : schema ? 'form' : 'json',
      message: data.message,
      context: data.context ?? null,
      requestedSchema: schema,
      labels: { ...APPROVAL_LABELS, ...data.labels },
      timeoutSeconds: timeout(data.timeoutSeconds),
    },
  };
}

function needsContent(input: Record<string, unknown>): FieldIssue[] {
  const hasContext = input.context !== undefined && input.context !== null;
  if (hasContext || input.requestedSchema !== undefined) return [];
  return [issue(['context'], 'missing', 'nothing to review: give context (json mode), requestedSchema (form mode) or both')];
}

/**
 * Checks what a reviewer submitted. A proposal validates only the `included` keys (required applies
 * only to those: the lock on required fields is a UI affordance, not a server rule); an included key
 * left empty is kept as null so the caller can tell "clear this field" from "leave it alone".
 */
export function checkDecisionValues(
  request: ReviewedRequest,
  values: unknown,
  included?: readonly string[],
): { ok: true; values: Record<string, unknown> } | { ok: false; issues: FieldIssue[] } {
  if (request.kind === 'approval') {
    if (request.requestedSchema) return validateValues(request.requestedSchema, values, { prefix: 'values' });
    if (values === undefined || (isObject(values) && Object.keys(values).length === 0)) return { ok: true, values: {} };
    return { ok: false, issues: [issue(['values'], 'unexpected', 'this approval has no form (json mode): approve or decline without values')] };
  }
  const schema = request.requestedSchema;
  const properties = Object.keys(schema.properties);
  if (!Array.isArray(included)) {
    return { ok: false, issues: [issue(['included'], 'missing', `is required: the list of keys the reviewer included (properties: ${list(properties)})`)] };
  }
  const issues: FieldIssue[] = [];
  const keys = new Set<string>();
  included.forEach((k: unknown, i) => {
    if (typeof k !== 'string') issues.push(issue(['included', i], 'invalid_type', wrongType('a string', k)));
    else if (!Object.hasOwn(schema.properties, k)) issues.push(issue(['included', i], 'unknown_field', `${quote(k)} is not a property of requestedSchema (properties: ${list(properties)})`));
    else keys.add(k);
  });
  const checked = validateValues(schema, values, { only: [...keys], prefix: 'values' });
  if (!checked.ok) issues.push(...checked.issues);
  if (issues.length || !checked.ok) return { ok: false, issues };
  const given = values as Record<string, unknown>;
  // Built from entries, so every key (the agent's property names) is an own key, whatever it is called.
  const cleared = [...keys].filter((k) => !Object.hasOwn(checked.values, k) && Object.hasOwn(given, k) && given[k] === null).map((k) => [k, null] as const);
  return { ok: true, values: Object.fromEntries([...Object.entries(checked.values), ...cleared]) };
}
