// MCP 2025-11-25 elicitation `requestedSchema`: the restricted, flat JSON Schema subset
// clients can render as a form, and the check of values submitted against it.
// Shared by the Node server and the browser extension, so it imports nothing but zod and shared/.
import * as z from 'zod';
import {
  article, duplicateOf, fromZod, isObject, issue, list, minExceedsMax, missing, notOneOf, oneOf, quote, repeated, segments,
  tooBig, tooLong, tooShort, tooSmall, unknownKey, valueAt, wrongType,
  type FieldIssue, type RuleNames, type Segment as Seg,
} from './field-issues.js';

// server/approvals/, server/mcp/ and extension/ still import these from here; their owners move them to field-issues.ts.

// A value's issues are found relative to the value and rendered once its place is known: under a property of the
// schema (a default) or of the values, with the caller's prefix ("requestedSchema", "values", "content"...).
interface Raw { at: Seg[]; rule: string; msg: string }
function render(raws: readonly Raw[], prefix: string): FieldIssue[] {
  return raws.map((r) => issue(r.at, r.rule, r.msg, { prefix }));
}

const FORMATS = ['email', 'uri', 'date', 'date-time'] as const;
const TYPES = ['string', 'number', 'integer', 'boolean', 'array'] as const;

const text = z.string().optional();
const count = z.int().min(0).optional();
const base = { title: text, description: text };
const Option = z.strictObject({ const: z.string(), title: z.string() });

// zod refinements only see the parsed value, so rule codes travel in `params`.
type Ctx = z.RefinementCtx;
function flag(ctx: Ctx, path: Seg[], rule: string, message: string): void {
  ctx.addIssue({ code: 'custom', path, message, params: { rule } });
}
function ordered(ctx: Ctx, lo: string, a: number | undefined, hi: string, b: number | undefined): void {
  if (a !== undefined && b !== undefined && a > b) flag(ctx, [lo], 'min_exceeds_max', minExceedsMax(lo, a, hi, b));
}
/**
 * Every repeated value as [its index, the index of its first occurrence], in one pass: an `indexOf` per value was
 * quadratic, and a 120,000-value enum held the event loop for 8 s (at creation, and again at every reload of the store).
 */
export function duplicates(values: readonly unknown[]): [number, number][] {
  const first = new Map<unknown, number>();
  const out: [number, number][] = [];
  values.forEach((v, i) => {
    const seen = first.get(v);
    if (seen === undefined) first.set(v, i);
    else out.push([i, seen]);
  });
  return out;
}
function unique(ctx: Ctx, values: readonly string[], at: (i: number) => Seg[]): void {
  for (const [i, first] of duplicates(values)) flag(ctx, at(i), 'duplicate', duplicateOf(values[i], `index ${first}`));
}
function offered(ctx: Ctx, value: string | undefined, options: readonly string[], at: Seg[], known: ReadonlySet<string> = new Set(options)): void {
  if (value !== undefined && !known.has(value)) {
    flag(ctx, at, 'default_not_in_options', notOneOf(options, value));
  }
}

const StringProp = z
  .strictObject({
    type: z.literal('string'), ...base, minLength: count, maxLength: count,
    format: z.enum(FORMATS).optional(), default: z.string().optional(),
  })
  .superRefine((p, ctx) => ordered(ctx, 'minLength', p.minLength, 'maxLength', p.maxLength));

const EnumProp = z
  .strictObject({
    type: z.literal('string'), ...base, enum: z.array(z.string()).min(1),
    enumNames: z.array(z.string()).optional(), default: z.string().optional(),
  })
  .superRefine((p, ctx) => {
    unique(ctx, p.enum, (i) => ['enum', i]);
    if (p.enumNames && p.enumNames.length !== p.enum.length) {
      flag(ctx, ['enumNames'], 'length_mismatch', `must have one name per enum value (${p.enum.length}), got ${p.enumNames.length}`);
    }
    offered(ctx, p.default, p.enum, ['default']);
  });

const TitledEnumProp = z
  .strictObject({ type: z.literal('string'), ...base, oneOf: z.array(Option).min(1), default: z.string().optional() })
  .superRefine((p, ctx) => {
    const consts = p.oneOf.map((o) => o.const);
    unique(ctx, consts, (i) => ['oneOf', i, 'const']);
    offered(ctx, p.default, consts, ['default']);
  });

const numeric = { ...base, minimum: z.number().optional(), maximum: z.number().optional() };
const NumberProp = z
  .strictObject({ type: z.literal('number'), ...numeric, default: z.number().optional() })
  .superRefine((p, ctx) => ordered(ctx, 'minimum', p.minimum, 'maximum', p.maximum));
const IntegerProp = z
  .strictObject({ type: z.literal('integer'), ...numeric, default: z.int().optional() })
  .superRefine((p, ctx) => ordered(ctx, 'minimum', p.minimum, 'maximum', p.maximum));

const BooleanProp = z.strictObject({ type: z.literal('boolean'), ...base, default: z.boolean().optional() });

const UntitledItems = z
  .strictObject({ type: z.literal('string').optional(), enum: z.array(z.string()).min(1) })
  .superRefine((p, ctx) => unique(ctx, p.enum, (i) => ['enum', i]));
const TitledItems = z
  .strictObject({ anyOf: z.array(Option).min(1) })
  .superRefine((p, ctx) => unique(ctx, p.anyOf.map((o) => o.const), (i) => ['anyOf', i, 'const']));

const MultiProp = z
  .strictObject({
    type: z.literal('array'), ...base, minItems: count, maxItems: count,
    items: z.union([UntitledItems, TitledItems]), default: z.array(z.string()).optional(),
  })
  .superRefine((p, ctx) => {
    ordered(ctx, 'minItems', p.minItems, 'maxItems', p.maxItems);
    const options = 'anyOf' in p.items ? p.items.anyOf.map((o) => o.const) : p.items.enum;
    const known = new Set(options);
    p.default?.forEach((v, i) => offered(ctx, v, options, ['default', i], known));
  });

const PROPERTY_BRANCHES = [StringProp, EnumProp, TitledEnumProp, NumberProp, IntegerProp, BooleanProp, MultiProp] as const;
const PropertyZ = z.union(PROPERTY_BRANCHES);
type Branch = (typeof PROPERTY_BRANCHES)[number] | typeof UntitledItems | typeof TitledItems;
type Prop = z.output<typeof PropertyZ>;

export const RequestedSchemaSchema = z
  .strictObject({
    $schema: text, type: z.literal('object'), title: text, description: text,
    properties: z.record(z.string(), PropertyZ).superRefine((props, ctx) => {
      const names = Object.keys(props);
      if (names.length === 0) flag(ctx, [], 'empty', 'must declare at least one property');
      for (const name of names) {
        const p = props[name];
        if (name === '') flag(ctx, [name], 'empty_name', 'property names must be non-empty');
        // A default the user cannot submit unchanged would make the form fail on "accept".
        if (p?.default !== undefined) {
          for (const r of checkValue(p, p.default)) {
            flag(ctx, [name, 'default', ...r.at], 'invalid_default', `${r.msg} (a default must satisfy its own property's constraints)`);
          }
        }
      }
    }),
    required: z.array(z.string()).optional(),
  })
  .superRefine((s, ctx) => {
    const required = s.required ?? [];
    for (const [i, first] of duplicates(required)) flag(ctx, ['required', i], 'duplicate', duplicateOf(required[i], `index ${first}`));
    required.forEach((name, i) => {
      if (Object.hasOwn(s.properties, name)) return;
      const known = list(Object.keys(s.properties));
      flag(ctx, ['required', i], 'required_missing_property', `names ${quote(name)}, which is not a key of properties (${known})`);
    });
  });

export type RequestedSchema = z.infer<typeof RequestedSchemaSchema>;
export type PropertySchema = RequestedSchema['properties'][string];

/** This module's rule codes where they differ from the tool inputs' (callers and the extension read them). */
const RULES: Partial<RuleNames> = {
  missing_choice: 'missing', wrong_type: 'type', not_object: 'not_object', not_one_of: 'enum',
  too_small: 'minimum', too_big: 'maximum', too_short: 'empty', too_long: 'maximum',
};
/** A property type's value, where it differs from zod's own name for it. */
const PROPERTY_VALUE: Record<string, string> = { array: 'an array of strings' };

// A failed zod union reports either every branch's failures or, when only one branch is
// "non-aborted", that branch's — often the wrong one ({type:"string", enum:[1]} reads as
// "unknown key enum"). The author plainly meant one form, so pick it from the value's
// discriminating keys and report that branch's issues only.
function pickProperty(at: Seg[], v: unknown): Branch | Raw {
  if (!isObject(v)) return { at, rule: 'not_object', msg: wrongType('an object describing one field', v) };
  switch (v.type) {
    case 'string': return 'enum' in v ? EnumProp : 'oneOf' in v ? TitledEnumProp : StringProp;
    case 'number': return NumberProp;
    case 'integer': return IntegerProp;
    case 'boolean': return BooleanProp;
    case 'array': return MultiProp;
  }
  if (v.type === undefined) return { at: [...at, 'type'], rule: 'missing', msg: missing(oneOf(TYPES)) };
  const hint = v.type === 'object' ? '; nested objects are not supported, flatten them into top-level properties' : '';
  return { at: [...at, 'type'], rule: 'type', msg: `${notOneOf(TYPES, v.type)}${hint}` };
}
function pickItems(at: Seg[], v: unknown): Branch | Raw {
  const shape = '{"enum": ["a", "b"]} or {"anyOf": [{"const": "a", "title": "A"}]}';
  if (!isObject(v)) return { at, rule: 'not_object', msg: wrongType(`an object listing the options, like ${shape}`, v) };
  if (v.type === 'object') return { at: [...at, 'type'], rule: 'type', msg: `arrays of objects are not supported; items must be ${shape}` };
  return 'anyOf' in v ? TitledItems : UntitledItems;
}
function checkBranch(root: unknown, at: Seg[], pick: (at: Seg[], v: unknown) => Branch | Raw, prefix: string): FieldIssue[] {
  const v = valueAt(root, at);
  const branch = pick(at, v);
  if (!('safeParse' in branch)) return render([branch], prefix);
  const parsed = branch.safeParse(v);
  if (parsed.success) return [];
  const own = parsed.error.issues.filter((i) => branch !== MultiProp || i.path[0] !== 'items');
  const items = own.length < parsed.error.issues.length ? checkBranch(root, [...at, 'items'], pickItems, prefix) : [];
  return [...items, ...schemaIssues(branch, own, root, at, prefix)];
}

/** zod's issues in the kit's words and this module's rule codes, with the meta-schema's own cases said better. */
function schemaIssues(schema: z.core.$ZodType, issues: readonly z.core.$ZodIssue[], root: unknown, base: Seg[], prefix: string): FieldIssue[] {
  const where = { prefix };
  return issues.flatMap((iss): FieldIssue[] => {
    const at = [...base, ...segments(iss.path)];
    const got = valueAt(root, at);
    if (got !== undefined && at[0] === 'properties') {
      if (iss.code === 'invalid_type' && at[2] === 'default') {
        const type = String(valueAt(root, [...at.slice(0, 2), 'type']));
        const why = at.length === 3 ? `${PROPERTY_VALUE[type] ?? article(type)} (the property's type)` : 'a string (the options are strings)';
        return [issue(at, 'wrong_default_type', wrongType(why, got), where)];
      }
      if (iss.code === 'invalid_value' && at[2] === 'format' && at.length === 3) return [issue(at, 'unknown_format', notOneOf(FORMATS, got), where)];
    }
    if (iss.code === 'invalid_value' && got !== undefined && at[at.length - 1] === 'type') return [issue(at, 'type', notOneOf(iss.values, got), where)];
    return fromZod(schema, [iss], valueAt(root, base), { ...where, base, rules: RULES });
  });
}

export function checkRequestedSchema(
  input: unknown,
  prefix = 'requestedSchema',
): { ok: true; schema: RequestedSchema } | { ok: false; issues: FieldIssue[] } {
  if (!isObject(input)) return { ok: false, issues: [issue([], 'not_object', wrongType('an object like {"type": "object", "properties": {...}}', input), { prefix })] };
  // zod leaves a "__proto__" key out of a record without a word (assigning it would replace the object's prototype), so
  // such a property would vanish between the agent and the person: it is refused by name instead.
  const reserved = isObject(input.properties) && Object.hasOwn(input.properties, '__proto__')
    ? [issue(['properties', '__proto__'], 'reserved_name', 'cannot be a property name (JavaScript objects reserve it, so its value would be lost); rename the property', { prefix })]
    : [];
  const parsed = RequestedSchemaSchema.safeParse(input);
  if (parsed.success) return reserved.length ? { ok: false, issues: reserved } : { ok: true, schema: parsed.data };
  const dispatched = new Map<string, FieldIssue[]>();
  const issues = parsed.error.issues.flatMap((iss): FieldIssue[] => {
    const name = iss.path[0] === 'properties' && iss.path.length > 1 ? String(iss.path[1]) : undefined;
    if (name === undefined) return schemaIssues(RequestedSchemaSchema, [iss], input, [], prefix);
    const seen = dispatched.get(name);
    const own = seen ?? checkBranch(input, ['properties', name], pickProperty, prefix);
    dispatched.set(name, own);
    // No branch-level problem means the issue came from a schema-wide refinement (e.g. invalid_default).
    if (own.length === 0) return schemaIssues(RequestedSchemaSchema, [iss], input, [], prefix);
    return seen ? [] : own;
  });
  return { ok: false, issues: [...reserved, ...issues] };
}

const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // setUTCFullYear, unlike Date.UTC, does not remap years 0-99 to 19xx; rollover exposes 02-30.
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}
function isUri(s: string): boolean {
  // URL's parser trims and percent-encodes whitespace; a form value with spaces is a typo, not a URI.
  if (/\s/.test(s) || !URL.canParse(s)) return false;
  return new URL(s).protocol.length > 1;
}
function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s.toUpperCase());
  if (!m || !isDate(m[1] ?? '')) return false;
  const n = (i: number): number => Number(m[i] ?? 0);
  return n(2) < 24 && n(3) < 60 && n(4) < 60 && n(7) < 24 && n(8) < 60 && !Number.isNaN(Date.parse(s.toUpperCase()));
}
const FORMAT_CHECKS: Record<(typeof FORMATS)[number], [(s: string) => boolean, string]> = {
  email: [(s) => EMAIL.test(s), 'an email address like name@example.com'],
  uri: [isUri, 'an absolute URI with a scheme, like https://example.com'],
  date: [isDate, 'a real calendar date formatted YYYY-MM-DD'],
  'date-time': [isDateTime, 'an RFC 3339 date-time with an offset, like 2025-01-31T09:30:00Z'],
};

function checkValue(p: Prop, v: unknown): Raw[] {
  const bad = (rule: string, msg: string, at: Seg[] = []): Raw[] => [{ at, rule, msg }];
  if (p.type === 'boolean') return typeof v === 'boolean' ? [] : bad('type', wrongType(article('boolean'), v));
  if (p.type === 'number' || p.type === 'integer') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return bad('type', wrongType(article('number'), v));
    if (p.type === 'integer' && !Number.isInteger(v)) return bad('type', wrongType(article('integer'), v));
    if (p.minimum !== undefined && v < p.minimum) return bad('minimum', tooSmall(p.minimum, v));
    if (p.maximum !== undefined && v > p.maximum) return bad('maximum', tooBig(p.maximum, v));
    return [];
  }
  const options = enumOptions(p).map((o) => o.value);
  if (p.type === 'array') {
    if (!Array.isArray(v)) return bad('type', wrongType(`an array of strings chosen from ${list(options)}`, v));
    const known = new Set(options);
    const chosen = new Set<string>();
    const out = v.flatMap((item: unknown, i): Raw[] => {
      if (typeof item !== 'string' || !known.has(item)) return bad('enum', notOneOf(options, item), [i]);
      if (chosen.has(item)) return bad('duplicate', repeated(item), [i]);
      chosen.add(item);
      return [];
    });
    const n = v.length;
    if (p.minItems !== undefined && n < p.minItems) out.push(...bad('min_items', `must choose at least ${p.minItems} option(s), got ${n}`));
    if (p.maxItems !== undefined && n > p.maxItems) out.push(...bad('max_items', `must choose at most ${p.maxItems} option(s), got ${n}`));
    return out;
  }
  if (typeof v !== 'string') return bad('type', wrongType(article('string'), v));
  if ('enum' in p || 'oneOf' in p) return options.includes(v) ? [] : bad('enum', notOneOf(options, v));
  // JSON Schema counts length in code points, not UTF-16 units.
  const length = [...v].length;
  if (p.minLength !== undefined && length < p.minLength) return bad('min_length', tooShort(p.minLength, length, 'character'));
  if (p.maxLength !== undefined && length > p.maxLength) return bad('max_length', tooLong(p.maxLength, length, 'character'));
  if (p.format) {
    const [test, wanted] = FORMAT_CHECKS[p.format];
    if (!test(v)) return bad('format', wrongType(`${wanted} (format "${p.format}")`, v));
  }
  return [];
}

export function validateValues(
  schema: RequestedSchema,
  values: unknown,
  options: { only?: readonly string[]; prefix?: string } = {},
): { ok: true; values: Record<string, unknown> } | { ok: false; issues: FieldIssue[] } {
  const prefix = options.prefix ?? 'values';
  if (!isObject(values)) return { ok: false, issues: [issue([], 'not_object', wrongType('an object mapping field names to values', values), { prefix })] };
  const only = options.only ? new Set(options.only) : undefined;
  const fields = Object.keys(schema.properties).filter((k) => !only || only.has(k));
  const submitted = new Set(fields);
  const required = new Set(schema.required);
  const raws: Raw[] = [];
  for (const key of Object.keys(values)) {
    if (submitted.has(key)) continue;
    const why = Object.hasOwn(schema.properties, key) ? 'it is a property of the schema, but not among the fields being submitted here' : undefined;
    raws.push({ at: [key], rule: 'unknown_key', msg: unknownKey(fields, why) });
  }
  // Keys are the agent's property names: a Map, then own keys, so "__proto__" or "constructor" stay plain names.
  const out = new Map<string, unknown>();
  for (const key of fields) {
    const p = schema.properties[key];
    // A value left out must read as missing, not as Object.prototype's member of that name ("toString").
    const v = Object.hasOwn(values, key) ? values[key] : undefined;
    if (!p) continue;
    // null counts as "left empty": form UIs and models both use it for an unset optional field.
    if (v === undefined || v === null) {
      if (required.has(key)) raws.push({ at: [key], rule: 'required', msg: `is required but ${v === null ? 'null' : 'missing'}` });
      continue;
    }
    const found = checkValue(p, v);
    raws.push(...found.map((r) => ({ ...r, at: [key, ...r.at] })));
    if (found.length === 0) out.set(key, v);
  }
  return raws.length ? { ok: false, issues: render(raws, prefix) } : { ok: true, values: Object.fromEntries(out) };
}

export function propertyKind(p: PropertySchema): 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi' {
  if (p.type === 'array') return 'multi';
  if ('enum' in p || 'oneOf' in p) return 'enum';
  return p.type;
}

export function enumOptions(p: PropertySchema): { value: string; title: string }[] {
  if ('enum' in p) return p.enum.map((value, i) => ({ value, title: p.enumNames?.[i] ?? value }));
  if ('oneOf' in p) return p.oneOf.map((o) => ({ value: o.const, title: o.title }));
  if (p.type !== 'array') return [];
  if ('anyOf' in p.items) return p.items.anyOf.map((o) => ({ value: o.const, title: o.title }));
  return p.items.enum.map((value) => ({ value, title: value }));
}
