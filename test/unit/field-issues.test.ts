import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  FieldIssueSchema,
  ZOD_RULES,
  article,
  clip,
  describe as describeValue,
  duplicateOf,
  first,
  formatIssues,
  fromZod,
  isObject,
  issue,
  list,
  minExceedsMax,
  missing,
  notOneOf,
  oneOf,
  pathOf,
  quote,
  repeated,
  segments,
  tooBig,
  tooLong,
  tooShort,
  tooSmall,
  unknownKey,
  valueAt,
  wrongType,
  type FieldIssue,
  type Segment,
} from '../../shared/field-issues.js';

const cyclic = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
};
const HUGE = 'x'.repeat(1_000_000);
const PAIR = '😀'; // two UTF-16 units

describe('isObject', () => {
  it.each<[string, unknown, boolean]>([
    ['a plain object', { a: 1 }, true],
    ['an empty object', {}, true],
    ['an object without a prototype', Object.create(null), true],
    ['a cyclic object', cyclic(), true],
    ['a Map (an object, not JSON)', new Map(), true],
    ['an array', [], false],
    ['an array with keys', Object.assign([1], { a: 1 }), false],
    ['null', null, false],
    ['undefined', undefined, false],
    ['a string', 'x', false],
    ['a number', 1, false],
    ['NaN', Number.NaN, false],
    ['a boolean', true, false],
    ['a function', () => 1, false],
    ['a symbol', Symbol('s'), false],
    ['a bigint', 1n, false],
  ])('%s', (_name, value, expected) => {
    expect(isObject(value)).toBe(expected);
  });
});

describe('clip', () => {
  it.each<[string, string, number | undefined, string]>([
    ['short text as is', 'abc', 5, 'abc'],
    ['exactly the limit as is', 'abcde', 5, 'abcde'],
    ['one over: cut with an ellipsis within the limit', 'abcdef', 5, 'abcd…'],
    ['the default is 60', 'y'.repeat(61), undefined, `${'y'.repeat(59)}…`],
    ['the empty string', '', 3, ''],
    ['a limit of 1 is the ellipsis alone', 'abc', 1, '…'],
    ['a limit of 0 still gives the ellipsis', 'abc', 0, '…'],
    ['a negative limit still gives the ellipsis', 'abc', -5, '…'],
    ['a fractional limit counts whole characters', 'abcdef', 3.9, 'ab…'],
    ['a surrogate pair is never split', `ab${PAIR}cd`, 4, 'ab…'],
    ['a pair that fits is kept', `a${PAIR}cd`, 4, `a${PAIR}…`],
    ['a huge string', HUGE, 10, `${'x'.repeat(9)}…`],
  ])('%s', (_name, text, n, expected) => {
    expect(n === undefined ? clip(text) : clip(text, n)).toBe(expected);
  });

  it('never returns more than the limit', () => {
    for (let n = 1; n < 12; n++) for (const text of ['', 'a', `${PAIR}${PAIR}${PAIR}${PAIR}${PAIR}${PAIR}`, 'abcdefghijklmnop']) expect(clip(text, n).length).toBeLessThanOrEqual(n);
  });
});

describe('quote', () => {
  it.each<[string, string, number | undefined, string]>([
    ['a short string in JSON quotes', 'ab', undefined, '"ab"'],
    ['escapes are kept', 'a"b\n', undefined, '"a\\"b\\n"'],
    ['a long string is clipped, quotes counted', 'z'.repeat(100), 10, `"${'z'.repeat(8)}…`],
    ['a huge string costs only a slice', HUGE, undefined, `"${'x'.repeat(58)}…`],
  ])('%s', (_name, text, n, expected) => {
    expect(n === undefined ? quote(text) : quote(text, n)).toBe(expected);
  });
});

describe('describe: how a received value is named', () => {
  it.each<[string, unknown, string]>([
    ['undefined', undefined, 'nothing'],
    ['null', null, 'null'],
    ['an array', [1, 2], 'an array'],
    ['an empty array', [], 'an array'],
    ['an object', { a: 1 }, 'an object'],
    ['a cyclic object', cyclic(), 'an object'],
    ['an object without a prototype', Object.create(null), 'an object'],
    ['a string', 'hi', 'string "hi"'],
    ['the empty string', '', 'string ""'],
    ['a string with quotes', 'say "x"', 'string "say \\"x\\""'],
    ['a huge string, clipped', HUGE, `string "${'x'.repeat(58)}…`],
    ['a number', 42, 'number 42'],
    ['a negative fraction', -1.5, 'number -1.5'],
    ['NaN', Number.NaN, 'number NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'number Infinity'],
    ['a boolean', false, 'boolean false'],
    ['a bigint', 12n, 'bigint 12'],
    ['a function, without its source', function secret() { return 'source'; }, 'a function'],
    ['a symbol', Symbol('s'), 'a symbol'],
  ])('%s', (_name, value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});

describe('list: the allowed values, quoted', () => {
  it.each<[string, readonly unknown[], string]>([
    ['none', [], ''],
    ['one', ['a'], '"a"'],
    ['several', ['a', 'b', 'c'], '"a", "b", "c"'],
    ['quotes inside are escaped', ['say "x"'], '"say \\"x\\""'],
    ['numbers, booleans and null unquoted', [1, true, null], '1, true, null'],
    ['the empty string is shown', [''], '""'],
  ])('%s', (_name, values, expected) => {
    expect(list(values)).toBe(expected);
  });

  it('stops at 200 characters, however many values', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => `value${i}`);
    const text = list(many);
    expect(text.length).toBeLessThanOrEqual(200);
    expect(text.endsWith('…')).toBe(true);
    expect(text.startsWith('"value0", "value1"')).toBe(true);
  });

  it('a huge value is clipped, not encoded whole', () => {
    const text = list([HUGE, 'b']);
    expect(text.length).toBe(200);
    expect(text.startsWith('"xxx')).toBe(true);
  });
});

describe('pathOf: paths rendered like a[0].b', () => {
  it.each<[string, Segment[], Parameters<typeof pathOf>[1], string]>([
    ['names joined by dots', ['a', 'b'], undefined, 'a.b'],
    ['an index in brackets', ['a', 0, 'b'], undefined, 'a[0].b'],
    ['an index first', [3, 'x'], undefined, '[3].x'],
    ['nested indexes', ['m', 1, 2], undefined, 'm[1][2]'],
    ['a key with a space is quoted', ['fields', 'first name'], undefined, 'fields["first name"]'],
    ['a key with a dot is quoted', ['a.b'], undefined, '["a.b"]'],
    ['the empty key is quoted', ['a', ''], undefined, 'a[""]'],
    ['a key starting with a digit is quoted', ['1st'], undefined, '["1st"]'],
    ['dashes, dollars and underscores are plain', ['x-y', '$z', '_w'], undefined, 'x-y.$z._w'],
    ['"__proto__" is a plain name', ['properties', '__proto__'], undefined, 'properties.__proto__'],
    ['a quote in a key is escaped', ['a"b'], undefined, '["a\\"b"]'],
    ['no steps: the whole request', [], undefined, '(request)'],
    ['no steps, named', [], { whole: 'stdin' }, 'stdin'],
    ['a prefix goes first', ['a', 0], { prefix: 'values' }, 'values.a[0]'],
    ['a dotted prefix is kept as is', ['b'], { prefix: 'params.requestedSchema' }, 'params.requestedSchema.b'],
    ['a prefix alone', [], { prefix: 'values' }, 'values'],
  ])('%s', (_name, at, where, expected) => {
    expect(pathOf(at, where)).toBe(expected);
  });

  it('a huge key is rendered whole (the path must locate the field)', () => {
    expect(pathOf(['a', HUGE])).toBe(`a.${HUGE}`);
  });
});

describe('segments', () => {
  it('keeps keys and indexes and names a symbol', () => {
    expect(segments(['a', 0, Symbol('s')])).toEqual(['a', 0, 'Symbol(s)']);
  });
});

describe('issue', () => {
  it.each<[string, FieldIssue, FieldIssue]>([
    ['the message starts with the path', issue(['a', 0], 'r', 'is wrong'), { path: 'a[0]', rule: 'r', message: 'a[0]: is wrong' }],
    ['the whole request', issue([], 'not_object', 'must be an object'), { path: '(request)', rule: 'not_object', message: '(request): must be an object' }],
    ['with a prefix', issue(['k'], 'r', 'm', { prefix: 'values' }), { path: 'values.k', rule: 'r', message: 'values.k: m' }],
    ['named whole', issue([], 'r', 'm', { whole: '(message)' }), { path: '(message)', rule: 'r', message: '(message): m' }],
  ])('%s', (_name, got, expected) => {
    expect(got).toEqual(expected);
    expect(FieldIssueSchema.parse(got)).toEqual(got);
  });

  it('a huge message is clipped to 400 characters', () => {
    const long = issue(['a'], 'r', HUGE);
    expect(long.message.length).toBe(400);
    expect(long.message.startsWith('a: xxx')).toBe(true);
    expect(long.message.endsWith('…')).toBe(true);
  });
});

describe('valueAt', () => {
  const root = { a: [{ b: 'x' }, null], c: { d: 0 }, e: undefined };
  it.each<[string, unknown, Segment[], unknown]>([
    ['the root itself', root, [], root],
    ['a key', root, ['c'], root.c],
    ['a key then an index then a key', root, ['a', 0, 'b'], 'x'],
    ['a falsy value is found', root, ['c', 'd'], 0],
    ['null in an array', root, ['a', 1], null],
    ['through null: nowhere', root, ['a', 1, 'b'], undefined],
    ['a missing key', root, ['z'], undefined],
    ['an index past the end', root, ['a', 5], undefined],
    ['into a string: nowhere', { s: 'abc' }, ['s', 0], undefined],
    ['into a number: nowhere', 5, ['a'], undefined],
    ['a root of undefined', undefined, ['a'], undefined],
    ['an inherited name is not a value', {}, ['toString'], undefined],
    ['"constructor" is not found on a plain object', { a: {} }, ['a', 'constructor'], undefined],
    ['an own "__proto__" key is found', JSON.parse('{"__proto__": {"x": 1}}') as unknown, ['__proto__', 'x'], 1],
    ['a cycle is walked as far as asked', cyclic(), ['self', 'self', 'self', 'a'], 1],
  ])('%s', (_name, value, at, expected) => {
    expect(valueAt(value, at)).toBe(expected);
  });
});

describe('formatIssues and first', () => {
  const issues = Array.from({ length: 12 }, (_, i) => ({ path: `p${i}`, rule: 'r', message: `m${i}` }));
  it.each<[string, FieldIssue[], string]>([
    ['none', [], ''],
    ['one', issues.slice(0, 1), 'm0'],
    ['two', issues.slice(0, 2), 'm0; m1'],
    ['ten, all shown', issues.slice(0, 10), 'm0; m1; m2; m3; m4; m5; m6; m7; m8; m9'],
    ['twelve: ten and a count', issues, 'm0; m1; m2; m3; m4; m5; m6; m7; m8; m9; and 2 more'],
  ])('formatIssues: %s', (_name, given, expected) => {
    expect(formatIssues(given)).toBe(expected);
  });
  it.each<[string, FieldIssue[], string | undefined, string]>([
    ['the first message', issues, undefined, 'm0'],
    ['none: the default', [], undefined, 'invalid input'],
    ['none: the given words', [], 'invalid message', 'invalid message'],
  ])('first: %s', (_name, given, none, expected) => {
    expect(none === undefined ? first(given) : first(given, none)).toBe(expected);
  });
});

describe('the wording of each rule', () => {
  it.each<[string, string, string]>([
    ['unknown key with the allowed ones', unknownKey(['a', 'b']), 'is not a recognized key (allowed here: "a", "b")'],
    ['unknown key, nothing allowed', unknownKey([]), 'is not a recognized key'],
    ['unknown key with a reason', unknownKey(['a'], 'it is not included'), 'is not a recognized key (allowed here: "a"); it is not included'],
    ['missing', missing('a string'), 'is required and must be a string'],
    ['missing a choice', missing(oneOf(['x', 'y'])), 'is required and must be one of "x", "y"'],
    ['wrong type', wrongType('a string', 5), 'must be a string, got number 5'],
    ['wrong type, nothing given', wrongType('an object', undefined), 'must be an object, got nothing'],
    ['not a finite number', wrongType(article('number'), Number.NaN), 'must be a finite number, got number NaN'],
    ['not one of several', notOneOf(['a', 'b'], 'c'), 'must be one of "a", "b", got string "c"'],
    ['not the one value', notOneOf(['object'], 'obj'), 'must be "object", got string "obj"'],
    ['not one of literals', notOneOf([true, 1], false), 'must be one of true, 1, got boolean false'],
    ['too short, one character', tooShort(1, 0, 'character'), 'must be at least 1 character long, got 0'],
    ['too short, characters', tooShort(2, 1, 'character'), 'must be at least 2 characters long, got 1'],
    ['too long, characters', tooLong(40, 41, 'character'), 'must be at most 40 characters long, got 41'],
    ['too few entries', tooShort(1, 0, 'entry'), 'must have at least 1 entry, got 0'],
    ['too many entries', tooLong(3, 5, 'entry'), 'must have at most 3 entries, got 5'],
    ['a number too small', tooSmall(1, 0), 'must be at least 1, got 0'],
    ['a number too small, bound excluded', tooSmall(0, 0, true), 'must be more than 0, got 0'],
    ['a number too big', tooBig(10, 12), 'must be at most 10, got 12'],
    ['a number too big, bound excluded', tooBig(10, 10, true), 'must be less than 10, got 10'],
    ['a bigint bound', tooBig(5n, 6n), 'must be at most 5, got 6'],
    ['a size bound given a non-number', tooSmall(1, 'x'), 'must be at least 1, got string "x"'],
    ['a duplicate with its first place', duplicateOf('a', 'index 0'), 'duplicates "a" (already at index 0)'],
    ['a duplicate alone', duplicateOf('a'), 'duplicates "a"'],
    ['a huge duplicate is clipped', duplicateOf(HUGE).slice(0, 14), 'duplicates "xx'],
    ['an option chosen twice', repeated('a'), 'repeats "a"; each option may be chosen once'],
    ['bounds the wrong way round', minExceedsMax('minLength', 5, 'maxLength', 2), 'minLength (5) must not exceed maxLength (2)'],
  ])('%s', (_name, got, expected) => {
    expect(got).toBe(expected);
  });

  it.each<[string, string]>([
    ['string', 'a string'], ['number', 'a finite number'], ['int', 'an integer'], ['integer', 'an integer'], ['boolean', 'a boolean'],
    ['object', 'an object'], ['record', 'an object'], ['array', 'an array'], ['null', 'null'], ['date', 'date'],
  ])('article(%s)', (type, expected) => {
    expect(article(type)).toBe(expected);
  });

  it('a huge allowed list stays short', () => {
    expect(unknownKey(Array.from({ length: 50_000 }, (_, i) => `k${i}`)).length).toBeLessThan(260);
  });
});

describe('fromZod: zod issues in the kit words', () => {
  const Schema = z.strictObject({
    name: z.string().trim().min(1).max(5),
    count: z.number().int().min(0).max(9).optional(),
    ratio: z.number().gt(0).optional(),
    kind: z.enum(['a', 'b']),
    flag: z.literal(true).optional(),
    tags: z.array(z.string()).min(1).max(2).optional(),
    nested: z.strictObject({ inner: z.string() }).optional(),
    map: z.record(z.string(), z.strictObject({ x: z.number() })).optional(),
    id: z.string().regex(/^i_\d+$/, 'must be an id like i_1').optional(),
    pick: z.union([z.string(), z.number()]).optional(),
  }).superRefine((v, ctx) => {
    if (v.name === 'taken') ctx.addIssue({ code: 'custom', path: ['name'], message: 'is taken', params: { rule: 'taken' } });
    if (v.name === 'plain') ctx.addIssue({ code: 'custom', path: ['name'], message: 'is plain' });
  });
  const ok = { name: 'n', kind: 'a' };
  const run = (input: unknown, options?: Parameters<typeof fromZod>[3]) => {
    const parsed = Schema.safeParse(input);
    if (parsed.success) return [];
    return fromZod(Schema, parsed.error.issues, input, options).map((i) => [i.path, i.rule, i.message]);
  };

  it.each<[string, unknown, string[]]>([
    ['an unknown key names the allowed ones', { ...ok, extra: 1 }, ['extra', 'unknown_key', 'extra: is not a recognized key (allowed here: "name", "count", "ratio", "kind", "flag", "tags", "nested", "map", "id", "pick")']],
    ['an unknown nested key names the nested ones', { ...ok, nested: { inner: 'x', other: 1 } }, ['nested.other', 'unknown_key', 'nested.other: is not a recognized key (allowed here: "inner")']],
    ['an unknown key under a record names the value shape', { ...ok, map: { k: { x: 1, y: 2 } } }, ['map.k.y', 'unknown_key', 'map.k.y: is not a recognized key (allowed here: "x")']],
    ['a missing string', { kind: 'a' }, ['name', 'missing', 'name: is required and must be a string']],
    ['a missing enum', { name: 'n' }, ['kind', 'invalid_value', 'kind: is required and must be one of "a", "b"']],
    ['a wrong type', { ...ok, name: 5 }, ['name', 'invalid_type', 'name: must be a string, got number 5']],
    ['not finite', { ...ok, count: Number.POSITIVE_INFINITY }, ['count', 'invalid_type', 'count: must be a finite number, got number Infinity']],
    ['not an integer', { ...ok, count: 1.5 }, ['count', 'invalid_type', 'count: must be an integer, got number 1.5']],
    ['not an object', { ...ok, nested: 'x' }, ['nested', 'invalid_type', 'nested: must be an object, got string "x"']],
    ['not a record', { ...ok, map: [] }, ['map', 'invalid_type', 'map: must be an object, got an array']],
    ['not one of', { ...ok, kind: 'c' }, ['kind', 'invalid_value', 'kind: must be one of "a", "b", got string "c"']],
    ['not the literal', { ...ok, flag: false }, ['flag', 'invalid_value', 'flag: must be true, got boolean false']],
    ['too short after trimming', { ...ok, name: '   ' }, ['name', 'too_small', 'name: must be at least 1 character long, got 0 after trimming']],
    ['too short', { ...ok, name: '' }, ['name', 'too_small', 'name: must be at least 1 character long, got 0']],
    ['too long', { ...ok, name: 'abcdef' }, ['name', 'too_big', 'name: must be at most 5 characters long, got 6']],
    ['too long, spaces around', { ...ok, name: ' abcdef ' }, ['name', 'too_big', 'name: must be at most 5 characters long, got 6']],
    ['a huge string', { ...ok, name: HUGE }, ['name', 'too_big', 'name: must be at most 5 characters long, got 1000000']],
    ['too few entries', { ...ok, tags: [] }, ['tags', 'too_small', 'tags: must have at least 1 entry, got 0']],
    ['too many entries', { ...ok, tags: ['a', 'b', 'c'] }, ['tags', 'too_big', 'tags: must have at most 2 entries, got 3']],
    ['a wrong entry', { ...ok, tags: ['a', 7] }, ['tags[1]', 'invalid_type', 'tags[1]: must be a string, got number 7']],
    ['a number too small', { ...ok, count: -1 }, ['count', 'too_small', 'count: must be at least 0, got -1']],
    ['a number too big', { ...ok, count: 10 }, ['count', 'too_big', 'count: must be at most 9, got 10']],
    ['a bound excluded', { ...ok, ratio: 0 }, ['ratio', 'too_small', 'ratio: must be more than 0, got 0']],
    ['a refinement with its rule', { ...ok, name: 'taken' }, ['name', 'taken', 'name: is taken']],
    ['a refinement without a rule', { ...ok, name: 'plain' }, ['name', 'invalid', 'name: is plain']],
    ['another code keeps its message', { ...ok, id: 'x' }, ['id', 'invalid_format', 'id: must be an id like i_1']],
    ['a union keeps zod words', { ...ok, pick: true }, ['pick', 'invalid_union', 'pick: Invalid input']],
  ])('%s', (_name, input, expected) => {
    expect(run(input)[0]).toEqual(expected);
  });

  it.each<[string, unknown, string]>([
    ['not an object at all', 'x', '(request): must be an object, got string "x"'],
    ['null', null, '(request): must be an object, got null'],
    ['an array', [ok], '(request): must be an object, got an array'],
    ['nothing', undefined, '(request): is required and must be an object'],
  ])('the whole input: %s', (_name, input, expected) => {
    expect(run(input)[0]?.[2]).toBe(expected);
  });

  it('every fault of an input at once', () => {
    expect(run({ name: 5, kind: 'c', extra: 1 }).map(([path, rule]) => `${path}:${rule}`).sort()).toEqual(['extra:unknown_key', 'kind:invalid_value', 'name:invalid_type']);
  });

  it('a module table renames the rules, and only those', () => {
    const rules = { missing_choice: 'missing', wrong_type: 'type', not_object: 'not_object', not_one_of: 'enum', too_short: 'empty', too_big: 'maximum' };
    expect(run({ kind: 'c', name: 5, nested: 1, tags: [], count: 99 }, { rules }).map(([path, rule]) => `${path}:${rule}`).sort()).toEqual(['count:maximum', 'kind:enum', 'name:type', 'nested:not_object', 'tags:empty']);
    expect(run({ name: 'n' }, { rules })[0]?.[1]).toBe('missing');
    expect(run({ ...ok, count: -1 }, { rules })[0]?.[1]).toBe(ZOD_RULES.too_small);
  });

  it('a part of a larger input: base and prefix place the path, root is the part', () => {
    const part = { ...ok, name: 5 };
    expect(run(part, { base: ['items', 2], prefix: 'params' })[0]).toEqual(['params.items[2].name', 'invalid_type', 'params.items[2].name: must be a string, got number 5']);
    expect(run('x', { whole: 'stdin' })[0]?.[0]).toBe('stdin');
  });

  it('without a schema there is no list of allowed keys', () => {
    const parsed = Schema.safeParse({ ...ok, extra: 1 });
    if (parsed.success) throw new Error('parsed');
    expect(fromZod(null, parsed.error.issues, { ...ok, extra: 1 })[0]?.message).toBe('extra: is not a recognized key');
  });

  it('a cyclic input is read, not walked whole', () => {
    const input = cyclic();
    const parsed = z.strictObject({ a: z.string() }).safeParse(input);
    if (parsed.success) throw new Error('parsed');
    expect(fromZod(z.strictObject({ a: z.string() }), parsed.error.issues, input).map((i) => i.message).sort()).toEqual(['a: must be a string, got number 1', 'self: is not a recognized key (allowed here: "a")']);
  });

  it('issues made by hand pass through untouched', () => {
    expect(fromZod(null, [], { any: 1 })).toEqual([]);
    const handmade: z.core.$ZodIssue = { code: 'custom', path: ['a', 0], message: 'is odd', input: undefined, params: { rule: 'odd' } };
    expect(fromZod(null, [handmade], {})).toEqual([{ path: 'a[0]', rule: 'odd', message: 'a[0]: is odd' }]);
  });
});
