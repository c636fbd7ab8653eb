// The Inspector's schema portability rules (shared/schema-portability.ts) as a table, the rewrite that satisfies them,
// and the rewrite's meaning: for every tool's schemas as zod emits them, the portable form accepts and refuses exactly
// the same values (ajv, draft 2020-12, over each tool's valid inputs and their mutations).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { portabilityFindings, portableSchema } from '../../shared/schema-portability.js';
import { listedOutputSchema } from '../../server/mcp/tools/tool.js';
import { TOOL_LOADERS } from '../../server/mcp/tools/tool-loaders.js';
import { TOOL_LISTINGS } from '../../server/mcp/tools/tool-listing.js';
import { northmarkProposal } from '../fixtures/northmark.js';

describe('portabilityFindings: the Inspector\'s four rules', () => {
  const rulesAt = (schema: unknown) => portabilityFindings(schema).map((f) => `${f.rule}@${f.path}`);
  it.each([
    ['a typed object', { type: 'object', properties: { a: { type: 'string' } } }, []],
    ['a bare {} value', { type: 'object', additionalProperties: {} }, ['untyped-schema@additionalProperties']],
    ['additionalProperties: true', { type: 'object', additionalProperties: true }, []],
    ['additionalProperties: false', { type: 'object', additionalProperties: false }, []],
    ['a description alone', { type: 'object', properties: { c: { description: 'anything' } } }, ['untyped-schema@properties.c']],
    ['a type array', { type: 'object', properties: { n: { type: ['number', 'null'] } } }, ['type-union@properties.n']],
    ['a malformed type array is not this rule', { type: 'object', properties: { n: { type: ['number', 'number'] } } }, []],
    ['a bare true as a property', { type: 'object', properties: { x: true } }, ['boolean-schema@properties.x']],
    ['a bare false in items', { type: 'array', items: false }, ['boolean-schema@items']],
    ['a boolean root', true, ['boolean-schema@']],
    ['{} under not is the exact "anything"', { not: {} }, []],
    ['a remote $ref', { $ref: 'https://example.com/s.json' }, ['remote-ref@']],
    ['a local $ref', { $ref: '#/$defs/a', $defs: { a: { type: 'string' } } }, []],
    ['a remote $ref under an $id is not flagged', { $id: 'https://example.com/root', type: 'object', properties: { a: { $ref: 'other.json' } } }, []],
    ['inside anyOf and items', { anyOf: [{ type: 'string' }, { type: 'array', items: {} }] }, ['untyped-schema@anyOf[1].items']],
    ['a quoted key', { type: 'object', properties: { 'a-b': {} } }, ['untyped-schema@properties["a-b"]']],
    ['if without then constrains nothing', { if: { type: 'string' } }, ['untyped-schema@']],
    ['instance data is not walked', { type: 'object', default: { x: {} }, examples: [{}] }, []],
  ] as const)('%s', (_name, schema, expected) => {
    expect(rulesAt(schema)).toEqual(expected);
  });
});

describe('portableSchema: the same meaning, in the form the rules accept', () => {
  const ANY = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }, { type: 'array' }, { type: 'null' }] };
  it.each([
    ['{} becomes any explicit type', { type: 'object', properties: { v: {} } }, { type: 'object', properties: { v: ANY } }],
    ['{} as the rule for other properties becomes true', { type: 'object', additionalProperties: {} }, { type: 'object', additionalProperties: true }],
    ['a described rule for other properties keeps its words', { type: 'object', additionalProperties: { description: 'd' } }, { type: 'object', additionalProperties: { description: 'd', ...ANY } }],
    ['annotations stay', { description: 'd', title: 't' }, { description: 'd', title: 't', ...ANY }],
    ['a type array becomes anyOf', { type: ['number', 'null'], minimum: 0 }, { minimum: 0, anyOf: [{ type: 'number' }, { type: 'null' }] }],
    ['beside an anyOf, both under allOf', { type: ['string', 'null'], anyOf: [{ minLength: 1 }, { type: 'null' }] },
      { allOf: [{ anyOf: [{ minLength: 1 }, { type: 'null' }] }, { anyOf: [{ type: 'string' }, { type: 'null' }] }] }],
    ['a bare true property', { type: 'object', properties: { x: true } }, { type: 'object', properties: { x: ANY } }],
    ['a bare false item', { type: 'array', items: false }, { type: 'array', items: { not: {} } }],
    ['booleans where they are rules stay', { type: 'object', additionalProperties: false }, { type: 'object', additionalProperties: false }],
    ['{} under not stays', { not: {} }, { not: {} }],
    ['dependencies\' list form stays', { type: 'object', dependencies: { a: ['b'] } }, { type: 'object', dependencies: { a: ['b'] } }],
  ] as const)('%s', (_name, schema, expected) => {
    const before = structuredClone(schema);
    const out = portableSchema(schema);
    expect(out).toEqual(expected);
    expect(portabilityFindings(out)).toEqual([]);
    expect(schema, 'the input is not changed').toEqual(before);
  });
});

describe('every tool\'s listed schemas', () => {
  it('follow the rules', () => {
    for (const tool of TOOL_LISTINGS) {
      expect(portabilityFindings(tool.inputSchema), `${tool.name} inputSchema`).toEqual([]);
      expect(portabilityFindings(tool.outputSchema), `${tool.name} outputSchema`).toEqual([]);
    }
  });

  /** Values around `valid`: itself, with each top-level field null, a number, a string, an object, removed, and an extra field. */
  function around(valid: Record<string, unknown>): unknown[] {
    const out: unknown[] = [valid, {}, null, [], 'text', 7];
    for (const key of Object.keys(valid)) {
      for (const v of [null, 3.5, -1, 'x', true, { a: 1 }, [1, null]]) out.push({ ...valid, [key]: v });
      const { [key]: _removed, ...without } = valid;
      out.push(without);
    }
    out.push({ ...valid, extra: 1 });
    return out;
  }

  const SAMPLES: Record<string, Record<string, unknown>[]> = {
    elicit_proposal: [structuredClone(northmarkProposal) as Record<string, unknown>],
    elicit_approval: [{ message: 'Deploy?', context: { build: 812, tags: ['a', null], nested: { deep: [1, { x: 'y' }] } } }],
    elicit_confirm: [{ message: 'Ship it?', labels: { yes: 'Yes', no: 'No' } }],
    elicit_form: [{ message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }],
    elicit_app_decide: [{ elicitationId: 'el_x', idempotencyKey: 'k', decision: 'approved', values: { a: 1, b: null, c: [{}] }, token: 't' }],
  };

  /** Results of every shape the tools give: an answer, a status, the common refusal and the app's refusal. */
  const RESULTS: Record<string, unknown>[] = [
    { action: 'accept', confirmed: true, content: { name: 'x' }, via: 'app' },
    { elicitationId: 'el_x', status: 'approved', decidedVia: 'extension', values: { a: [1, { b: null }] }, reviewer: { connected: true } },
    { error: 'invalid_arguments', message: 'm', hint: 'h', issues: [{ path: 'a', rule: 'type', message: 'm' }] },
    { error: { code: 'token_invalid', field: 'token', message: 'm' } },
    { ok: true, status: 'approved' },
  ];

  it('mean what zod\'s own JSON Schemas mean: ajv gives each sample the same verdict against both', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    let compared = 0;
    for (const [name, load] of Object.entries(TOOL_LOADERS)) {
      const tool = await load();
      const input = tool.config.inputSchema['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
      const output = listedOutputSchema(tool.config)['~standard'].jsonSchema.output({ target: 'draft-2020-12' });
      for (const [which, raw] of [['input', input], ['output', output]] as const) {
        const original = ajv.compile(raw);
        const portable = ajv.compile(portableSchema(raw));
        for (const sample of (which === 'input' ? (SAMPLES[name] ?? [{}]) : RESULTS).flatMap(around)) {
          expect(portable(sample), `${name} ${which}: ${JSON.stringify(sample)?.slice(0, 200)}`).toBe(original(sample));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });
});
