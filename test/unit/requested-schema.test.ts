import { describe, it, expect } from 'vitest';
import { formatIssues, type FieldIssue } from '../../shared/field-issues.js';
import {
  checkRequestedSchema,
  enumOptions,
  propertyKind,
  RequestedSchemaSchema,
  validateValues,
  type PropertySchema,
  type RequestedSchema,
} from '../../shared/requested-schema.js';

const obj = (properties: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'object',
  properties,
  ...extra,
});
const one = (prop: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => obj({ f: prop }, extra);

function mustParse(input: unknown): RequestedSchema {
  const r = checkRequestedSchema(input);
  if (!r.ok) throw new Error(formatIssues(r.issues));
  return r.schema;
}
function issuesOf(r: { ok: true } | { ok: false; issues: FieldIssue[] }): FieldIssue[] {
  return r.ok ? [] : r.issues;
}

describe('checkRequestedSchema: valid schemas', () => {
  const valid: [string, Record<string, unknown>][] = [
    ['plain string', one({ type: 'string' })],
    ['string with everything', one({ type: 'string', title: 'Name', description: 'Your name', minLength: 1, maxLength: 50, default: 'Ada' })],
    ['string minLength = maxLength', one({ type: 'string', minLength: 3, maxLength: 3 })],
    ['email format', one({ type: 'string', format: 'email', default: 'a@b.co' })],
    ['uri format', one({ type: 'string', format: 'uri' })],
    ['date format with default', one({ type: 'string', format: 'date', default: '2024-02-29' })],
    ['date-time format', one({ type: 'string', format: 'date-time', default: '2025-01-31T09:30:00+01:00' })],
    ['number with range', one({ type: 'number', minimum: -1.5, maximum: 10, default: 2.25 })],
    ['integer with default', one({ type: 'integer', minimum: 0, maximum: 120, default: 42 })],
    ['boolean', one({ type: 'boolean', title: 'Agree?', default: false })],
    ['untitled enum', one({ type: 'string', enum: ['red', 'green'], default: 'green' })],
    ['legacy enumNames', one({ type: 'string', enum: ['r', 'g'], enumNames: ['Red', 'Green'] })],
    ['titled oneOf', one({ type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'r' })],
    ['multi untitled', one({ type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2, default: ['a'] })],
    ['multi untitled without items.type', one({ type: 'array', items: { enum: ['a', 'b'] } })],
    ['multi titled anyOf', one({ type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }, { const: 'b', title: 'B' }] }, default: ['a', 'b'] })],
    [
      'top-level metadata + required',
      obj({ name: { type: 'string' }, age: { type: 'integer' } }, { $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Who', description: 'About you', required: ['name', 'age'] }),
    ],
    ['empty required', one({ type: 'string' }, { required: [] })],
    ['property named like a keyword', obj({ default: { type: 'string', default: 'x' }, 'first name': { type: 'boolean' } })],
  ];
  it.each(valid)('%s', (_name, input) => {
    const r = checkRequestedSchema(input);
    expect(issuesOf(r)).toEqual([]);
    expect(r.ok).toBe(true);
  });
  it('RequestedSchemaSchema parses on its own', () => {
    expect(RequestedSchemaSchema.safeParse(valid[16]?.[1]).success).toBe(true);
    expect(RequestedSchemaSchema.safeParse(one({ type: 'object' })).success).toBe(false);
  });
  it('returns a schema equal to the input', () => {
    for (const row of [valid[1], valid[13], valid[16]]) {
      const input = row?.[1];
      const r = checkRequestedSchema(input);
      expect(r.ok && r.schema).toEqual(input);
    }
  });
});

describe('checkRequestedSchema: invalid schemas', () => {
  const P = 'requestedSchema.properties.f';
  const invalid: [string, unknown, string, string][] = [
    ['null input', null, 'requestedSchema', 'not_object'],
    ['string input', '{"type":"object"}', 'requestedSchema', 'not_object'],
    ['array input', [], 'requestedSchema', 'not_object'],
    ['top-level type not object', { type: 'array', properties: { f: { type: 'string' } } }, 'requestedSchema.type', 'type'],
    ['top-level type missing', { properties: { f: { type: 'string' } } }, 'requestedSchema.type', 'missing'],
    ['unknown top-level key', one({ type: 'string' }, { additionalProperties: false }), 'requestedSchema.additionalProperties', 'unknown_key'],
    ['properties empty', obj({}), 'requestedSchema.properties', 'empty'],
    ['properties not an object', obj([{ type: 'string' }]), 'requestedSchema.properties', 'not_object'],
    ['properties missing', { type: 'object' }, 'requestedSchema.properties', 'missing'],
    ['empty property name', obj({ '': { type: 'string' } }), 'requestedSchema.properties[""]', 'empty_name'],
    ['property not an object', one('string'), P, 'not_object'],
    ['nested object property', one({ type: 'object', properties: { x: { type: 'string' } } }), `${P}.type`, 'type'],
    ['type null', one({ type: 'null' }), `${P}.type`, 'type'],
    ['type missing', one({ title: 'x' }), `${P}.type`, 'missing'],
    ['array of objects', one({ type: 'array', items: { type: 'object', properties: {} } }), `${P}.items.type`, 'type'],
    ['array items without enum', one({ type: 'array', items: { type: 'string' } }), `${P}.items.enum`, 'missing'],
    ['array items not an object', one({ type: 'array', items: 'string' }), `${P}.items`, 'not_object'],
    ['string default wrong type', one({ type: 'string', default: 3 }), `${P}.default`, 'wrong_default_type'],
    ['number default wrong type', one({ type: 'number', default: '3' }), `${P}.default`, 'wrong_default_type'],
    ['integer default wrong type', one({ type: 'integer', default: 'x' }), `${P}.default`, 'wrong_default_type'],
    ['integer default 1.5', one({ type: 'integer', default: 1.5 }), `${P}.default`, 'wrong_default_type'],
    ['boolean default wrong type', one({ type: 'boolean', default: 'true' }), `${P}.default`, 'wrong_default_type'],
    ['enum default wrong type', one({ type: 'string', enum: ['a'], default: 1 }), `${P}.default`, 'wrong_default_type'],
    ['enum default not an option', one({ type: 'string', enum: ['a'], default: 'b' }), `${P}.default`, 'default_not_in_options'],
    ['multi default wrong type', one({ type: 'array', items: { enum: ['a'] }, default: 'a' }), `${P}.default`, 'wrong_default_type'],
    ['multi default element wrong type', one({ type: 'array', items: { enum: ['a'] }, default: [1] }), `${P}.default[0]`, 'wrong_default_type'],
    ['multi default not in options', one({ type: 'array', items: { enum: ['a', 'b'] }, default: ['a', 'z'] }), `${P}.default[1]`, 'default_not_in_options'],
    ['titled multi default not in options', one({ type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] }, default: ['b'] }), `${P}.default[0]`, 'default_not_in_options'],
    ['unknown format', one({ type: 'string', format: 'phone' }), `${P}.format`, 'unknown_format'],
    ['unknown key pattern', one({ type: 'string', pattern: '^a' }), `${P}.pattern`, 'unknown_key'],
    ['unknown key properties on string', one({ type: 'string', properties: {} }), `${P}.properties`, 'unknown_key'],
    ['format on an enum', one({ type: 'string', enum: ['a'], format: 'email' }), `${P}.format`, 'unknown_key'],
    ['minLength > maxLength', one({ type: 'string', minLength: 5, maxLength: 2 }), `${P}.minLength`, 'min_exceeds_max'],
    ['negative minLength', one({ type: 'string', minLength: -1 }), `${P}.minLength`, 'minimum'],
    ['fractional maxLength', one({ type: 'string', maxLength: 2.5 }), `${P}.maxLength`, 'type'],
    ['minimum > maximum', one({ type: 'number', minimum: 10, maximum: 1 }), `${P}.minimum`, 'min_exceeds_max'],
    ['minItems > maxItems', one({ type: 'array', items: { enum: ['a', 'b'] }, minItems: 2, maxItems: 1 }), `${P}.minItems`, 'min_exceeds_max'],
    ['enum empty', one({ type: 'string', enum: [] }), `${P}.enum`, 'empty'],
    ['enum duplicate', one({ type: 'string', enum: ['a', 'b', 'a'] }), `${P}.enum[2]`, 'duplicate'],
    ['enum with a non-string', one({ type: 'string', enum: ['a', 1] }), `${P}.enum[1]`, 'type'],
    ['enumNames wrong length', one({ type: 'string', enum: ['a', 'b'], enumNames: ['A'] }), `${P}.enumNames`, 'length_mismatch'],
    ['oneOf missing title', one({ type: 'string', oneOf: [{ const: 'a' }] }), `${P}.oneOf[0].title`, 'missing'],
    ['oneOf duplicate const', one({ type: 'string', oneOf: [{ const: 'a', title: 'A' }, { const: 'a', title: 'B' }] }), `${P}.oneOf[1].const`, 'duplicate'],
    ['anyOf items duplicate const', one({ type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }, { const: 'a', title: 'B' }] } }), `${P}.items.anyOf[1].const`, 'duplicate'],
    ['required naming a missing key', one({ type: 'string' }, { required: ['f', 'g'] }), 'requestedSchema.required[1]', 'required_missing_property'],
    ['required not an array', one({ type: 'string' }, { required: 'f' }), 'requestedSchema.required', 'type'],
    ['required duplicate', one({ type: 'string' }, { required: ['f', 'f'] }), 'requestedSchema.required[1]', 'duplicate'],
    ['default violating minLength', one({ type: 'string', minLength: 3, default: 'ab' }), `${P}.default`, 'invalid_default'],
    ['default violating format', one({ type: 'string', format: 'email', default: 'nope' }), `${P}.default`, 'invalid_default'],
    ['default above maximum', one({ type: 'integer', maximum: 5, default: 6 }), `${P}.default`, 'invalid_default'],
  ];
  it.each(invalid)('%s', (_name, input, path, rule) => {
    const r = checkRequestedSchema(input);
    expect(r.ok).toBe(false);
    const first = issuesOf(r)[0];
    expect({ path: first?.path, rule: first?.rule }).toEqual({ path, rule });
    expect(first?.message).toContain(path);
  });

  it('reports only the intended branch of a union', () => {
    const issues = issuesOf(checkRequestedSchema(one({ type: 'string', format: 'phone' })));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toBe('requestedSchema.properties.f.format: must be one of "email", "uri", "date", "date-time", got string "phone"');
  });
  it('names the property type in a wrong default message', () => {
    const issues = issuesOf(checkRequestedSchema(obj({ age: { type: 'integer', default: 'x' } })));
    expect(issues[0]?.message).toBe(`requestedSchema.properties.age.default: must be an integer (the property's type), got string "x"`);
  });
  it('lists allowed keys for an unknown property key', () => {
    const issues = issuesOf(checkRequestedSchema(one({ type: 'boolean', pattern: 'x' })));
    expect(issues[0]?.message).toContain('allowed here: "type", "title", "description", "default"');
  });
  it('hints at flattening nested objects', () => {
    const issues = issuesOf(checkRequestedSchema(one({ type: 'object' })));
    expect(issues[0]?.message).toContain('nested objects are not supported');
  });
  it('uses the caller prefix', () => {
    const issues = issuesOf(checkRequestedSchema(obj({}), 'params.requestedSchema'));
    expect(issues[0]?.path).toBe('params.requestedSchema.properties');
  });
  it('collects several issues at once', () => {
    const issues = issuesOf(checkRequestedSchema(obj({ a: { type: 'null' }, b: { type: 'string', format: 'x' } }, { extra: 1 })));
    expect(issues.map((i) => i.rule).sort()).toEqual(['type', 'unknown_format', 'unknown_key']);
  });
});

describe('validateValues', () => {
  const schema = mustParse(
    obj(
      {
        name: { type: 'string', minLength: 2, maxLength: 5 },
        email: { type: 'string', format: 'email' },
        site: { type: 'string', format: 'uri' },
        born: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
        score: { type: 'number', minimum: 0, maximum: 10 },
        age: { type: 'integer', minimum: 18 },
        ok: { type: 'boolean' },
        color: { type: 'string', enum: ['red', 'green'] },
        size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }] },
        tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 },
      },
      { required: ['name'] },
    ),
  );
  const good: [string, Record<string, unknown>][] = [
    ['only the required key', { name: 'Ada' }],
    ['email', { name: 'Ada', email: 'ada@example.org' }],
    ['uri', { name: 'Ada', site: 'https://example.com/x?y=1' }],
    ['urn uri', { name: 'Ada', site: 'urn:isbn:0451450523' }],
    ['date (leap day)', { name: 'Ada', born: '2024-02-29' }],
    ['date-time Z', { name: 'Ada', at: '2025-01-31T09:30:00Z' }],
    ['date-time offset + fraction', { name: 'Ada', at: '2025-01-31T09:30:00.123-05:00' }],
    ['number float and bounds', { name: 'Ada', score: 9.5 }],
    ['integer at minimum', { name: 'Ada', age: 18 }],
    ['boolean false', { name: 'Ada', ok: false }],
    ['enum', { name: 'Ada', color: 'green' }],
    ['oneOf const', { name: 'Ada', size: 's' }],
    ['multi', { name: 'Ada', tags: ['a', 'c'] }],
    ['optional null omitted', { name: 'Ada', email: null }],
    ['astral chars counted as code points', { name: '😀😀' }],
  ];
  it.each(good)('accepts %s', (_n, values) => {
    const r = validateValues(schema, values);
    expect(issuesOf(r)).toEqual([]);
    const expected = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
    expect(r.ok && r.values).toEqual(expected);
  });

  const bad: [string, unknown, string, string][] = [
    ['not an object', ['Ada'], 'values', 'not_object'],
    ['null', null, 'values', 'not_object'],
    ['required missing', {}, 'values.name', 'required'],
    ['required null', { name: null }, 'values.name', 'required'],
    ['unknown key', { name: 'Ada', nick: 'A' }, 'values.nick', 'unknown_key'],
    ['string type', { name: 12 }, 'values.name', 'type'],
    ['too short', { name: 'A' }, 'values.name', 'min_length'],
    ['too long', { name: 'Adaline' }, 'values.name', 'max_length'],
    ['bad email', { name: 'Ada', email: 'ada@localhost' }, 'values.email', 'format'],
    ['bad uri', { name: 'Ada', site: 'example.com/x' }, 'values.site', 'format'],
    ['bad date', { name: 'Ada', born: '2023-02-29' }, 'values.born', 'format'],
    ['date with time', { name: 'Ada', born: '2023-02-01T00:00:00Z' }, 'values.born', 'format'],
    ['date-time without offset', { name: 'Ada', at: '2025-01-31T09:30:00' }, 'values.at', 'format'],
    ['date-time bad hour', { name: 'Ada', at: '2025-01-31T24:30:00Z' }, 'values.at', 'format'],
    ['number as string', { name: 'Ada', score: '5' }, 'values.score', 'type'],
    ['number above maximum', { name: 'Ada', score: 10.5 }, 'values.score', 'maximum'],
    ['integer given float', { name: 'Ada', age: 30.5 }, 'values.age', 'type'],
    ['integer below minimum', { name: 'Ada', age: 17 }, 'values.age', 'minimum'],
    ['boolean as string', { name: 'Ada', ok: 'true' }, 'values.ok', 'type'],
    ['enum not an option', { name: 'Ada', color: 'blue' }, 'values.color', 'enum'],
    ['oneOf title instead of const', { name: 'Ada', size: 'Small' }, 'values.size', 'enum'],
    ['multi not an array', { name: 'Ada', tags: 'a' }, 'values.tags', 'type'],
    ['multi option not offered', { name: 'Ada', tags: ['a', 'z'] }, 'values.tags[1]', 'enum'],
    ['multi duplicate', { name: 'Ada', tags: ['a', 'a'] }, 'values.tags[1]', 'duplicate'],
    ['multi below minItems', { name: 'Ada', tags: [] }, 'values.tags', 'min_items'],
    ['multi above maxItems', { name: 'Ada', tags: ['a', 'b', 'c'] }, 'values.tags', 'max_items'],
  ];
  it.each(bad)('refuses %s', (_n, values, path, rule) => {
    const r = validateValues(schema, values);
    expect(r.ok).toBe(false);
    const first = issuesOf(r)[0];
    expect({ path: first?.path, rule: first?.rule }).toEqual({ path, rule });
    expect(first?.message).toContain(path);
  });

  it('`only` restricts required and refuses keys outside it', () => {
    expect(validateValues(schema, { age: 20 }, { only: ['age'] })).toEqual({ ok: true, values: { age: 20 } });
    const r = validateValues(schema, { age: 20, name: 'Ada' }, { only: ['age'] });
    expect(issuesOf(r).map((i) => [i.path, i.rule])).toEqual([['values.name', 'unknown_key']]);
    expect(issuesOf(r)[0]?.message).toContain('not among the fields being submitted');
  });
  it('uses the caller prefix', () => {
    expect(issuesOf(validateValues(schema, {}, { prefix: 'content' }))[0]?.path).toBe('content.name');
  });
});

describe('property names an agent may choose', () => {
  // JSON.parse keeps "__proto__" as an own key, as a JSON-RPC body does; an object literal would set the prototype.
  const withProto = (rest = '') => JSON.parse(`{"type":"object","properties":{"__proto__":{"type":"string"}${rest}}}`) as unknown;

  it('refuses "__proto__" by name instead of losing it (zod leaves it out of a parsed record)', () => {
    const r = checkRequestedSchema(withProto(',"b":{"type":"string"}'));
    expect(issuesOf(r).map((i) => [i.path, i.rule])).toEqual([['requestedSchema.properties.__proto__', 'reserved_name']]);
    expect(issuesOf(r)[0]?.message).toMatch(/rename the property/);
  });

  it('reports "__proto__" beside the other problems of a schema', () => {
    const r = checkRequestedSchema(withProto(',"b":{"type":"strin"}'));
    expect(issuesOf(r).map((i) => i.rule)).toEqual(['reserved_name', 'type']);
  });

  const names = ['constructor', 'toString', 'hasOwnProperty', 'valueOf'] as const;
  const schema = mustParse(obj(Object.fromEntries(names.map((n) => [n, { type: 'string' }])), { required: [...names] }));

  it.each(names)('a missing %s is missing, not the Object.prototype member of that name', (name) => {
    const values = Object.fromEntries(names.filter((n) => n !== name).map((n) => [n, 'x']));
    expect(issuesOf(validateValues(schema, values)).map((i) => [i.path, i.rule])).toEqual([[`values.${name}`, 'required']]);
  });

  it('keeps a value named "__proto__" as an own key when a schema holding one reaches it', () => {
    const hand = { type: 'object', properties: JSON.parse('{"__proto__":{"type":"string"}}') as RequestedSchema['properties'] } as const;
    const r = validateValues(hand, JSON.parse('{"__proto__":"kept"}'));
    expect(r.ok && Object.hasOwn(r.values, '__proto__') && r.values.__proto__).toBe('kept');
    expect(r.ok && Object.getPrototypeOf(r.values)).toBe(Object.prototype);
  });
});

describe('formatIssues', () => {
  it('joins and clips', () => {
    const issues = Array.from({ length: 12 }, (_, i) => ({ path: `p${i}`, rule: 'x', message: `m${i}` }));
    expect(formatIssues(issues.slice(0, 2))).toBe('m0; m1');
    expect(formatIssues(issues)).toBe('m0; m1; m2; m3; m4; m5; m6; m7; m8; m9; and 2 more');
  });
});

describe('propertyKind / enumOptions', () => {
  const rows: [string, unknown, ReturnType<typeof propertyKind>, ReturnType<typeof enumOptions>][] = [
    ['string', { type: 'string', format: 'email' }, 'string', []],
    ['number', { type: 'number' }, 'number', []],
    ['integer', { type: 'integer' }, 'integer', []],
    ['boolean', { type: 'boolean' }, 'boolean', []],
    ['enum', { type: 'string', enum: ['a', 'b'] }, 'enum', [{ value: 'a', title: 'a' }, { value: 'b', title: 'b' }]],
    ['enumNames', { type: 'string', enum: ['a'], enumNames: ['A'] }, 'enum', [{ value: 'a', title: 'A' }]],
    ['oneOf', { type: 'string', oneOf: [{ const: 'a', title: 'A' }] }, 'enum', [{ value: 'a', title: 'A' }]],
    ['multi enum', { type: 'array', items: { enum: ['x'] } }, 'multi', [{ value: 'x', title: 'x' }]],
    ['multi anyOf', { type: 'array', items: { anyOf: [{ const: 'x', title: 'X' }] } }, 'multi', [{ value: 'x', title: 'X' }]],
  ];
  it.each(rows)('%s', (_n, prop, kind, options) => {
    const p: PropertySchema | undefined = mustParse(one(prop)).properties.f;
    if (!p) throw new Error('missing property');
    expect(propertyKind(p)).toBe(kind);
    expect(enumOptions(p)).toEqual(options);
  });
});

describe('duplicate checks are linear (finding 7)', () => {
  it.each([
    ['no repeat', ['a', 'b', 'c'], []],
    ['one repeat names its first index', ['a', 'b', 'a'], [['requestedSchema.properties.f.enum[2]', 'duplicates "a" (already at index 0)']]],
    ['every repeat names the first, not the previous', ['x', 'x', 'x'], [['requestedSchema.properties.f.enum[1]', 'duplicates "x" (already at index 0)'], ['requestedSchema.properties.f.enum[2]', 'duplicates "x" (already at index 0)']]],
    ['interleaved repeats', ['a', 'b', 'b', 'a'], [['requestedSchema.properties.f.enum[2]', 'duplicates "b" (already at index 1)'], ['requestedSchema.properties.f.enum[3]', 'duplicates "a" (already at index 0)']]],
    ['"__proto__" and "constructor" are plain values', ['__proto__', 'constructor', '__proto__'], [['requestedSchema.properties.f.enum[2]', 'duplicates "__proto__" (already at index 0)']]],
  ])('enum: %s', (_name, values, expected) => {
    const issues = issuesOf(checkRequestedSchema(one({ type: 'string', enum: values })));
    expect(issues.map((i) => [i.path, i.message.slice(i.path.length + 2)])).toEqual(expected);
    expect(issues.every((i) => i.rule === 'duplicate')).toBe(true);
  });

  it.each([
    ['a repeat in multi-select items', { type: 'array', items: { enum: ['a', 'b', 'a'] } }, 'requestedSchema.properties.f.items.enum[2]', 'duplicate'],
    ['a repeat in titled options', { type: 'string', oneOf: [{ const: 'a', title: 'A' }, { const: 'a', title: 'B' }] }, 'requestedSchema.properties.f.oneOf[1].const', 'duplicate'],
    ['a repeat in a default selection', { type: 'array', items: { enum: ['a', 'b'] }, default: ['b', 'b'] }, 'requestedSchema.properties.f.default[1]', 'invalid_default'],
  ])('%s', (_name, prop, path, rule) => {
    expect(issuesOf(checkRequestedSchema(one(prop))).map((i) => [i.path, i.rule])).toContainEqual([path, rule]);
  });

  it('repeated required names are reported once each', () => {
    const issues = issuesOf(checkRequestedSchema(obj({ a: { type: 'string' } }, { required: ['a', 'a', 'a'] })));
    expect(issues.map((i) => [i.path, i.rule])).toEqual([['requestedSchema.required[1]', 'duplicate'], ['requestedSchema.required[2]', 'duplicate']]);
  });

  // Quadratic, these took 8 s on an idle machine (and again at every takeover, when the store is read back); linear they
  // take milliseconds. The bound, 4 s, holds on a machine busy with the parallel suite (measured up to 2 s there) and
  // still fails the quadratic check, which the same load slows down as much.
  const BOUND_MS = 4000;
  const values = Array.from({ length: 120_000 }, (_, i) => `v${i}`);
  it.each([
    ['finding 7: a 120,000-value enum is checked in well under a second', { type: 'string', enum: values, default: values[values.length - 1] }],
    ['finding 7: a 120,000-option multi-select with every option as its default is checked in well under a second', { type: 'array', items: { enum: values }, default: values }],
    ['finding 7: 120,000 titled options are checked in well under a second', { type: 'string', oneOf: values.map((v) => ({ const: v, title: v })) }],
  ])('%s', (_name, prop) => {
    const started = performance.now();
    const checked = checkRequestedSchema(one(prop));
    const ms = performance.now() - started;
    expect(checked.ok).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('finding 7: a 120,000-value answer to a multi-select is validated in well under a second', () => {
    const schema = mustParse(one({ type: 'array', items: { enum: values } }));
    const started = performance.now();
    expect(validateValues(schema, { f: values }).ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
  });
});
