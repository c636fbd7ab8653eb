import { describe, it, expect } from 'vitest';
import {
  byteLength,
  checkApprovalInput,
  checkDecisionValues,
  checkProposalInput,
  LIMITS,
  nestingDepth,
  type ApprovalRequest,
  type ProposalRequest,
} from '../../shared/approval-input.js';
import type { FieldIssue } from '../../shared/field-issues.js';
import { northmarkProposal } from '../fixtures/northmark.js';

type Seg = string | number;
const DELETE = Symbol('delete');

/** A deep copy of `base` with one value replaced (or removed) at `at`, typed loosely on purpose: these inputs are meant to be wrong. */
function patch(base: unknown, at: readonly Seg[], value: unknown): Record<string, unknown> {
  const root = structuredClone(base) as Record<string, unknown>;
  let node: Record<Seg, unknown> = root;
  at.slice(0, -1).forEach((s) => {
    node = node[s] as Record<Seg, unknown>;
  });
  const last = at[at.length - 1] as Seg;
  if (value === DELETE) delete node[last];
  else node[last] = value;
  return root;
}
const proposal = (at: readonly Seg[], value: unknown): Record<string, unknown> => patch(northmarkProposal, at, value);

const approvalBase = { message: 'Ship the release?', context: { version: '1.2.0' } };
const approvalSchema = {
  type: 'object',
  properties: { reason: { type: 'string', title: 'Reason' }, count: { type: 'integer', minimum: 1 } },
  required: ['reason'],
};
const approval = (at: readonly Seg[], value: unknown): Record<string, unknown> => patch(approvalBase, at, value);

const big = (bytes: number): string => 'x'.repeat(bytes);

function issuesOf(r: { ok: true } | { ok: false; issues: FieldIssue[] }): FieldIssue[] {
  return r.ok ? [] : r.issues;
}
function mustProposal(input: unknown): ProposalRequest {
  const r = checkProposalInput(input);
  if (!r.ok) throw new Error(r.issues.map((i) => i.message).join('; '));
  return r.request;
}
function mustApproval(input: unknown): ApprovalRequest {
  const r = checkApprovalInput(input);
  if (!r.ok) throw new Error(r.issues.map((i) => i.message).join('; '));
  return r.request;
}

describe('invalid tool inputs', () => {
  const cases: [string, 'proposal' | 'approval', unknown, string, string][] = [
    // proposal: fields cross-checks
    ['field not in the schema', 'proposal', proposal(['fields', 'foo'], { current: 1 }), 'fields.foo', 'unknown_field'],
    ['field key needing brackets', 'proposal', proposal(['fields', 'first name'], {}), 'fields["first name"]', 'unknown_field'],
    ['source not declared in columns', 'proposal', proposal(['fields', 'name', 'sources', 'bing'], 'NorthMark'), 'fields.name.sources.bing', 'unknown_source'],
    ['include not a boolean', 'proposal', proposal(['fields', 'name', 'include'], 'yes'), 'fields.name.include', 'invalid_type'],
    ['unknown key in a field', 'proposal', proposal(['fields', 'name', 'note'], 'x'), 'fields.name.note', 'unknown_key'],
    ['field sources an array', 'proposal', proposal(['fields', 'name', 'sources'], ['a']), 'fields.name.sources', 'invalid_type'],
    ['field not an object', 'proposal', proposal(['fields', 'name'], 'NorthMark'), 'fields.name', 'invalid_type'],
    ['fields missing', 'proposal', proposal(['fields'], DELETE), 'fields', 'missing'],
    // proposal: columns
    ['duplicate source key', 'proposal', proposal(['columns', 'sources', 1, 'key'], 'apollo'), 'columns.sources[1].key', 'duplicate'],
    ['duplicate source label', 'proposal', proposal(['columns', 'sources', 1, 'label'], 'Apollo'), 'columns.sources[1].label', 'duplicate'],
    ['duplicate label after trimming', 'proposal', proposal(['columns', 'sources', 1, 'label'], ' Apollo '), 'columns.sources[1].label', 'duplicate'],
    ['empty sources', 'proposal', proposal(['columns', 'sources'], []), 'columns.sources', 'too_small'],
    ['blank source label', 'proposal', proposal(['columns', 'sources', 0, 'label'], '   '), 'columns.sources[0].label', 'too_small'],
    ['empty source key', 'proposal', proposal(['columns', 'sources', 0, 'key'], ''), 'columns.sources[0].key', 'too_small'],
    ['unknown key on a source column', 'proposal', proposal(['columns', 'sources', 0, 'color'], 'red'), 'columns.sources[0].color', 'unknown_key'],
    ['columns.current missing', 'proposal', proposal(['columns', 'current'], DELETE), 'columns.current', 'missing'],
    ['columns.current.label empty', 'proposal', proposal(['columns', 'current', 'label'], ''), 'columns.current.label', 'too_small'],
    ['columns missing', 'proposal', proposal(['columns'], DELETE), 'columns', 'missing'],
    // proposal: requestedSchema passes through checkRequestedSchema
    ['default of the wrong type', 'proposal', proposal(['requestedSchema', 'properties', 'employeeCount', 'default'], 'many'), 'requestedSchema.properties.employeeCount.default', 'wrong_default_type'],
    ['default outside the options', 'proposal', proposal(['requestedSchema', 'properties', 'institutionTypes', 'default'], ['Bank']), 'requestedSchema.properties.institutionTypes.default[0]', 'default_not_in_options'],
    ['default failing its format', 'proposal', proposal(['requestedSchema', 'properties', 'website', 'default'], 'northmark dot com'), 'requestedSchema.properties.website.default', 'invalid_default'],
    ['required names no property', 'proposal', proposal(['requestedSchema', 'required'], ['name', 'phone']), 'requestedSchema.required[1]', 'required_missing_property'],
    ['nested object property', 'proposal', proposal(['requestedSchema', 'properties', 'address'], { type: 'object' }), 'requestedSchema.properties.address.type', 'type'],
    ['requestedSchema not an object', 'proposal', proposal(['requestedSchema'], 'name,website'), 'requestedSchema', 'not_object'],
    ['requestedSchema missing', 'proposal', proposal(['requestedSchema'], DELETE), 'requestedSchema', 'missing'],
    // proposal: top level
    ['message missing', 'proposal', proposal(['message'], DELETE), 'message', 'missing'],
    ['message blank', 'proposal', proposal(['message'], '  \n '), 'message', 'too_small'],
    ['message over 4000 characters', 'proposal', proposal(['message'], big(4001)), 'message', 'too_big'],
    ['unknown top-level key', 'proposal', proposal(['operation'], 'create'), 'operation', 'unknown_key'],
    ['ok label of 41 characters', 'proposal', proposal(['labels'], { ok: big(41) }), 'labels.ok', 'too_big'],
    ['blank cancel label', 'proposal', proposal(['labels'], { cancel: '  ' }), 'labels.cancel', 'too_small'],
    ['unknown label', 'proposal', proposal(['labels'], { retry: 'Again' }), 'labels.retry', 'unknown_key'],
    ['timeoutSeconds a string', 'proposal', proposal(['timeoutSeconds'], '600'), 'timeoutSeconds', 'invalid_type'],
    ['timeoutSeconds infinite', 'proposal', proposal(['timeoutSeconds'], Number.POSITIVE_INFINITY), 'timeoutSeconds', 'invalid_type'],
    ['displayTemplate not a string', 'proposal', proposal(['displayTemplate'], 42), 'displayTemplate', 'invalid_type'],
    ['template over 16 KB', 'proposal', proposal(['displayTemplate'], big(LIMITS.templateBytes + 1)), 'displayTemplate', 'too_large'],
    ['template over 16 KB in UTF-8 bytes', 'proposal', proposal(['displayTemplate'], 'é'.repeat(LIMITS.templateBytes / 2 + 1)), 'displayTemplate', 'too_large'],
    ['context over 64 KB', 'proposal', proposal(['context'], { blob: big(LIMITS.contextBytes) }), 'context', 'too_large'],
    ['request over 512 KB', 'proposal', proposal(['fields', 'name', 'sources', 'apollo'], big(LIMITS.requestBytes)), 'fields', 'too_large'],
    ['not an object', 'proposal', ['message'], '(request)', 'not_object'],
    // approval
    ['neither context nor requestedSchema', 'approval', approval(['context'], DELETE), 'context', 'missing'],
    ['null context and no requestedSchema', 'approval', approval(['context'], null), 'context', 'missing'],
    ['approval message missing', 'approval', approval(['message'], DELETE), 'message', 'missing'],
    ['approval given proposal columns', 'approval', approval(['columns'], northmarkProposal.columns), 'columns', 'unknown_key'],
    ['approval label of 41 characters', 'approval', approval(['labels'], { ok: big(41) }), 'labels.ok', 'too_big'],
    ['approval timeoutSeconds a string', 'approval', approval(['timeoutSeconds'], '60'), 'timeoutSeconds', 'invalid_type'],
    ['approval schema without properties', 'approval', approval(['requestedSchema'], { type: 'object', properties: {} }), 'requestedSchema.properties', 'empty'],
    ['approval schema with a bad default', 'approval', approval(['requestedSchema'], { type: 'object', properties: { n: { type: 'integer', default: 1.5 } } }), 'requestedSchema.properties.n.default', 'wrong_default_type'],
    ['approval template over 16 KB', 'approval', approval(['displayTemplate'], big(LIMITS.templateBytes + 1)), 'displayTemplate', 'too_large'],
    ['approval context over 64 KB', 'approval', approval(['context'], [big(LIMITS.contextBytes)]), 'context', 'too_large'],
    ['approval request over 512 KB', 'approval', approval(['requestedSchema'], { type: 'object', properties: { a: { type: 'string', description: big(LIMITS.requestBytes) } } }), 'requestedSchema', 'too_large'],
  ];

  it.each(cases)('%s (%s)', (_name, kind, input, path, rule) => {
    const issues = issuesOf(kind === 'proposal' ? checkProposalInput(input) : checkApprovalInput(input));
    expect(issues.length).toBeGreaterThan(0);
    const [first] = issues;
    expect({ path: first?.path, rule: first?.rule }).toEqual({ path, rule });
    expect(first?.message.startsWith(`${path}: `)).toBe(true);
  });

  it('names the allowed keys, the schema properties, the declared sources and the limits', () => {
    const text = (input: unknown): string => issuesOf(checkProposalInput(input)).map((i) => i.message).join('\n');
    expect(text(proposal(['fields', 'foo'], {}))).toContain('fields.foo: is not a property of requestedSchema (properties: "name", "website", "employeeCount", "institutionTypes")');
    expect(text(proposal(['fields', 'name', 'sources', 'bing'], 1))).toContain('(sources: "apollo", "crunchbase")');
    expect(text(proposal(['operation'], 'create'))).toContain('allowed here: "message", "columns", "requestedSchema", "fields"');
    expect(text(proposal(['displayTemplate'], big(LIMITS.templateBytes + 1)))).toContain('16384 bytes');
    expect(text(proposal(['context'], big(LIMITS.contextBytes)))).toContain('65536 bytes');
    expect(text(proposal(['message'], big(LIMITS.requestBytes)))).toContain('524288 bytes');
    expect(issuesOf(checkApprovalInput({ message: 'x' }))[0]?.message).toContain('give context (json mode), requestedSchema (form mode) or both');
  });

  it('stops at the whole-request limit without reading the rest', () => {
    const input = { ...proposal(['message'], big(LIMITS.requestBytes)), bogus: true };
    expect(issuesOf(checkProposalInput(input))).toHaveLength(1);
  });

  it('reports problems in several places at once', () => {
    const input = patch(proposal(['labels'], { ok: '' }), ['fields', 'foo'], {});
    const paths = issuesOf(checkProposalInput(patch(input, ['requestedSchema', 'properties', 'name', 'default'], 3))).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['labels.ok', 'requestedSchema.properties.name.default']));
  });
});

describe('valid proposals', () => {
  it('normalizes the NorthMark example', () => {
    const r = checkProposalInput(northmarkProposal);
    expect(r.ok && r.displayTemplate).toBe(null);
    const req = mustProposal(northmarkProposal);
    expect(req).toMatchObject({
      kind: 'proposal',
      message: northmarkProposal.message,
      columns: northmarkProposal.columns,
      context: northmarkProposal.context,
      labels: { ok: 'Submit Changes', cancel: 'Cancel' },
      timeoutSeconds: 3600,
    });
    expect(Object.keys(req.requestedSchema.properties)).toEqual(['name', 'website', 'employeeCount', 'institutionTypes']);
    expect(req.fields.institutionTypes).toEqual({ sources: { apollo: ['Asset Manager', 'Private Equity'] }, current: [], include: true });
    expect(req.fields.name).toEqual({ sources: { apollo: 'NorthMark Strategies', crunchbase: 'NorthMark Strategies Inc.' }, current: null });
  });

  it('leaves a proposed-only property out of fields', () => {
    const input = proposal(['requestedSchema', 'properties', 'phone'], { type: 'string', title: 'Phone', default: '+1 555 0100' });
    const req = mustProposal(input);
    expect(Object.keys(req.requestedSchema.properties)).toContain('phone');
    expect(req.fields).not.toHaveProperty('phone');
  });

  it('fills absent sources and current with blanks', () => {
    const req = mustProposal(proposal(['fields'], { name: {} }));
    expect(req.fields).toEqual({ name: { sources: {}, current: null } });
  });

  it.each([
    ['absent', DELETE, 3600],
    ['too short', 10, 60],
    ['too long', 999_999, 86_400],
    ['in range', 900, 900],
  ])('timeoutSeconds %s', (_name, value, expected) => {
    expect(mustProposal(proposal(['timeoutSeconds'], value)).timeoutSeconds).toBe(expected);
    expect(mustApproval(approval(['timeoutSeconds'], value)).timeoutSeconds).toBe(expected);
  });

  it('trims labels and keeps the default for the one not given', () => {
    expect(mustProposal(proposal(['labels'], { ok: '  Sync  ' })).labels).toEqual({ ok: 'Sync', cancel: 'Cancel' });
  });

  it('returns displayTemplate separately and context as null when absent', () => {
    const r = checkProposalInput(patch(proposal(['context'], DELETE), ['displayTemplate'], '<h1>{{ context.recordId }}</h1>'));
    expect(r.ok && r.displayTemplate).toBe('<h1>{{ context.recordId }}</h1>');
    expect(r.ok && r.request.context).toBe(null);
  });
});

describe('valid approvals', () => {
  it.each([
    ['json', approvalBase, 'json'],
    ['form', { message: 'Why?', requestedSchema: approvalSchema }, 'form'],
    ['form with null context', { message: 'Why?', context: null, requestedSchema: approvalSchema }, 'form'],
    ['both', { ...approvalBase, requestedSchema: approvalSchema }, 'both'],
    ['json with a falsy context', { message: 'Zero?', context: 0 }, 'json'],
  ])('%s mode', (_name, input, mode) => {
    const req = mustApproval(input);
    expect(req.mode).toBe(mode);
    expect(req.requestedSchema === null).toBe(mode === 'json');
  });

  it('defaults labels to Approve / Decline and context to null', () => {
    const req = mustApproval({ message: ' Why? ', requestedSchema: approvalSchema });
    expect(req).toMatchObject({ kind: 'approval', message: 'Why?', context: null, labels: { ok: 'Approve', cancel: 'Decline' }, timeoutSeconds: 3600 });
  });
});

/** `depth` arrays (or objects) nested in one another, built without recursion. */
function nested(depth: number, kind: 'array' | 'object' = 'object'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

describe('names an agent chooses', () => {
  it('a column keyed "__proto__" is refused by name (zod would drop it from every field)', () => {
    const input = patch(northmarkProposal, ['columns', 'sources', 0, 'key'], '__proto__');
    expect(checkProposalInput(input)).toMatchObject({ ok: false, issues: expect.arrayContaining([expect.objectContaining({ path: 'columns.sources[0].key', rule: 'reserved_name' })]) });
  });

  it('an included field cleared to null comes back as an own key, whatever its name', () => {
    const request = mustProposal({
      message: 'names',
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Now' } },
      requestedSchema: { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' } } },
      fields: {},
    });
    const checked = checkDecisionValues(request, { constructor: null, toString: 'x' }, ['constructor', 'toString']);
    expect(checked).toEqual({ ok: true, values: { constructor: null, toString: 'x' } });
    if (checked.ok) expect(Object.keys(checked.values)).toEqual(['toString', 'constructor']);
  });
});

describe('nesting depth', () => {
  it.each([
    ['a scalar', 'x', 0],
    ['an empty object', {}, 1],
    ['an array of scalars', [1, 2], 1],
    ['3 objects', nested(3), 3],
    ['3 arrays', nested(3, 'array'), 3],
    ['the deepest branch counts', { a: 1, b: { c: { d: [1] } } }, 4],
  ])('%s → %i', (_what, value, depth) => {
    expect(nestingDepth(value)).toBe(depth);
  });

  it('walks 100,000 levels without recursion, and stops early when asked', () => {
    expect(nestingDepth(nested(100_000, 'array'))).toBe(100_000);
    expect(nestingDepth(nested(100_000), 40)).toBe(41);
  });

  it(`refuses agent JSON nested more than ${LIMITS.depth} levels at creation, naming the field and the limit`, () => {
    const deep = checkApprovalInput({ message: 'deep', context: nested(3000) });
    expect(deep).toEqual({
      ok: false,
      issues: [{ path: 'context', rule: 'too_deep', message: `context: nests arrays and objects more than ${LIMITS.depth} levels deep; the limit is ${LIMITS.depth}` }],
    });
    expect(checkApprovalInput({ message: 'just over', context: nested(LIMITS.depth + 1) }).ok).toBe(false);
    expect(checkApprovalInput({ message: 'at the limit', context: nested(LIMITS.depth) }).ok).toBe(true);
    const proposal = patch(northmarkProposal, ['fields', 'name', 'sources', 'apollo'], nested(3000, 'array'));
    expect(checkProposalInput(proposal)).toMatchObject({ ok: false, issues: [{ path: 'fields', rule: 'too_deep' }] });
  });
});

describe('byteLength', () => {
  it.each([
    [undefined, 0],
    [null, 4],
    ['é', 4],
    [{ a: 1 }, 7],
    [['😀'], 8],
  ])('%j is %i bytes', (value, bytes) => {
    expect(byteLength(value)).toBe(bytes);
  });
});

describe('checkDecisionValues', () => {
  const northmark = mustProposal(northmarkProposal);
  const json = mustApproval(approvalBase);
  const form = mustApproval({ message: 'Why?', requestedSchema: approvalSchema });
  const both = mustApproval({ ...approvalBase, requestedSchema: approvalSchema });

  it.each<[string, unknown, string[], Record<string, unknown>]>([
    ['included keys only', { name: 'NorthMark', employeeCount: 231 }, ['name', 'employeeCount'], { name: 'NorthMark', employeeCount: 231 }],
    ['required name not included', { employeeCount: 231 }, ['employeeCount'], { employeeCount: 231 }],
    ['nothing included', {}, [], {}],
    ['multiselect', { institutionTypes: ['REIT'] }, ['institutionTypes'], { institutionTypes: ['REIT'] }],
    ['included and cleared keeps null', { website: null }, ['website'], { website: null }],
    ['included but omitted', {}, ['website'], {}],
  ])('proposal accepts %s', (_name, values, included, expected) => {
    expect(checkDecisionValues(northmark, values, included)).toEqual({ ok: true, values: expected });
  });

  it.each<[string, ReturnType<typeof mustApproval> | ProposalRequest, unknown, string[] | undefined, string, string]>([
    ['proposal value for an unincluded key', northmark, { name: 'NorthMark', website: 'https://x.io/' }, ['name'], 'values.website', 'unknown_key'],
    ['proposal value for a non-property', northmark, { phone: '1' }, [], 'values.phone', 'unknown_key'],
    ['proposal wrong type', northmark, { employeeCount: '230' }, ['employeeCount'], 'values.employeeCount', 'type'],
    ['proposal required included but null', northmark, { name: null }, ['name'], 'values.name', 'required'],
    ['proposal bad uri', northmark, { website: 'northmark' }, ['website'], 'values.website', 'format'],
    ['proposal unknown included key', northmark, {}, ['name', 'phone'], 'included[1]', 'unknown_field'],
    ['proposal without included', northmark, { name: 'NorthMark' }, undefined, 'included', 'missing'],
    ['proposal values not an object', northmark, 'NorthMark', ['name'], 'values', 'not_object'],
    ['form missing required', form, { count: 2 }, undefined, 'values.reason', 'required'],
    ['both below minimum', both, { reason: 'ok', count: 0 }, undefined, 'values.count', 'minimum'],
    ['json mode with values', json, { reason: 'ok' }, undefined, 'values', 'unexpected'],
  ])('refuses %s', (_name, request, values, included, path, rule) => {
    const [first] = issuesOf(checkDecisionValues(request, values, included));
    expect({ path: first?.path, rule: first?.rule }).toEqual({ path, rule });
    expect(first?.message.startsWith(`${path}: `)).toBe(true);
  });

  it.each<[string, ApprovalRequest, unknown, Record<string, unknown>]>([
    ['json without values', json, undefined, {}],
    ['json with empty values', json, {}, {}],
    ['form ignoring included', form, { reason: 'because' }, { reason: 'because' }],
    ['both', both, { reason: 'because', count: 3 }, { reason: 'because', count: 3 }],
  ])('approval accepts %s', (_name, request, values, expected) => {
    expect(checkDecisionValues(request, values, ['ignored'])).toEqual({ ok: true, values: expected });
  });
});
