// The one way to say what is wrong with an input: the issue shape (a path, a rule code a program can test, a message a
// person or a model can act on), paths rendered `a[0].b`, received values named briefly, and one wording per rule, so
// a refusal reads the same whichever check made it. Shared by the server and the extension: zod only.
import * as z from 'zod';

export const FieldIssueSchema = z.strictObject({ path: z.string(), rule: z.string(), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

/** One step of a path: an object key or an array index. */
export type Segment = string | number;

/** A zod issue's path as segments (zod allows symbol keys; JSON has none, so one is named by its description). */
export function segments(path: readonly PropertyKey[]): Segment[] {
  return path.map((s) => (typeof s === 'symbol' ? String(s) : s));
}

/**
 * How a path is rendered: `prefix` goes before the first step (`values`, `requestedSchema`), `whole` names the input
 * itself when there are no steps at all.
 */
export interface Where {
  prefix?: string;
  whole?: string;
}

/** A message never runs past this, so a refusal still fits on the caller's line. */
const MESSAGE_CHARS = 400;
/** A received string is shown this long at most. */
const SHOWN_CHARS = 60;
/** A list of allowed values is cut here: it stops reading, so 100,000 values cost no more than ten. */
const LIST_CHARS = 200;

/** A JSON object (not null, not an array): what schemas, values and requests must be. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `s` cut to at most `n` characters, the last one `…`; a surrogate pair is never split in two. */
export function clip(s: string, n = SHOWN_CHARS): string {
  const max = Math.max(1, Math.floor(n));
  if (s.length <= max) return s;
  let end = max - 1;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${s.slice(0, end)}…`;
}

/** A string as JSON text, clipped; only a slice of a huge string is encoded. */
export function quote(s: string, n = SHOWN_CHARS): string {
  return clip(JSON.stringify(s.length > n ? s.slice(0, n + 1) : s), n);
}

function shown(v: unknown): string {
  return typeof v === 'string' ? quote(v, LIST_CHARS) : String(v);
}

/** How a received value is named in a message: its kind, and a short form of a scalar. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'symbol') return 'a symbol';
  if (typeof v === 'string') return `string ${quote(v)}`;
  return `${typeof v} ${clip(String(v))}`;
}

/** The allowed values, quoted and joined, up to 200 characters. */
export function list(values: readonly unknown[]): string {
  let text = '';
  for (const v of values) {
    text += (text === '' ? '' : ', ') + shown(v);
    if (text.length > LIST_CHARS) break;
  }
  return clip(text, LIST_CHARS);
}

const NAME = /^[A-Za-z_$][\w$-]*$/;

/** `a[0].b`; a key that is not a plain name is quoted (`fields["first name"]`). */
export function pathOf(at: readonly Segment[], where: Where = {}): string {
  const path = at.reduce<string>((text, s) => {
    if (typeof s === 'number') return `${text}[${s}]`;
    if (!NAME.test(s)) return `${text}[${JSON.stringify(s)}]`;
    return text === '' ? s : `${text}.${s}`;
  }, where.prefix ?? '');
  return path === '' ? (where.whole ?? '(request)') : path;
}

/** An issue at `at`; its message starts with the path, so it reads alone. */
export function issue(at: readonly Segment[], rule: string, message: string, where: Where = {}): FieldIssue {
  const path = pathOf(at, where);
  return { path, rule, message: clip(`${path}: ${message}`, MESSAGE_CHARS) };
}

/** The value at `at` in `root`, through own keys only; undefined where the path leads nowhere. */
export function valueAt(root: unknown, at: readonly Segment[]): unknown {
  let here = root;
  for (const s of at) {
    if (typeof here !== 'object' || here === null || !Object.hasOwn(here, s)) return undefined;
    here = (here as Record<Segment, unknown>)[s];
  }
  return here;
}

/** The first ten messages joined, and how many more there were. */
export function formatIssues(issues: readonly FieldIssue[]): string {
  const shownIssues = issues.slice(0, 10).map((i) => i.message);
  if (issues.length > 10) shownIssues.push(`and ${issues.length - 10} more`);
  return shownIssues.join('; ');
}

/** The first message alone, for a one-line refusal; `none` when there is none. */
export function first(issues: readonly FieldIssue[], none = 'invalid input'): string {
  return issues[0]?.message ?? none;
}

// The wording of each rule. Every check says these words, so the same fault reads the same everywhere.

const ARTICLES: Record<string, string> = {
  string: 'a string', number: 'a finite number', int: 'an integer', integer: 'an integer', bigint: 'an integer',
  boolean: 'a boolean', object: 'an object', record: 'an object', array: 'an array', tuple: 'an array', null: 'null',
};

/** A type's name in a message: `number` → "a finite number" (JSON has no other kind). */
export function article(type: string): string {
  return ARTICLES[type] ?? type;
}

/** A key the object does not take; `why` adds what the list alone cannot say. */
export function unknownKey(allowed: readonly string[], why?: string): string {
  const hint = allowed.length > 0 ? ` (allowed here: ${list(allowed)})` : '';
  return `is not a recognized key${hint}${why ? `; ${why}` : ''}`;
}

/** A value left out that must be given: `expected` says what, `a string` or `one of "a", "b"`. */
export function missing(expected: string): string {
  return `is required and must be ${expected}`;
}

export function wrongType(expected: string, got: unknown): string {
  return `must be ${expected}, got ${describe(got)}`;
}

export function notOneOf(options: readonly unknown[], got: unknown): string {
  return `must be ${oneOf(options)}, got ${describe(got)}`;
}

/** `"a"` for one option, `one of "a", "b"` for more. */
export function oneOf(options: readonly unknown[]): string {
  return options.length === 1 ? shown(options[0]) : `one of ${list(options)}`;
}

const UNITS = { character: ['character', 'characters'], entry: ['entry', 'entries'] } as const;
type Unit = keyof typeof UNITS;

function counted(n: number, unit: Unit): string {
  return `${n} ${UNITS[unit][n === 1 ? 0 : 1]}`;
}

/** A string (`character`) or a list (`entry`) shorter than allowed. */
export function tooShort(min: number, length: number, unit: Unit): string {
  return unit === 'character' ? `must be at least ${counted(min, unit)} long, got ${length}` : `must have at least ${counted(min, unit)}, got ${length}`;
}

export function tooLong(max: number, length: number, unit: Unit): string {
  return unit === 'character' ? `must be at most ${counted(max, unit)} long, got ${length}` : `must have at most ${counted(max, unit)}, got ${length}`;
}

function number(got: unknown): string {
  return typeof got === 'number' || typeof got === 'bigint' ? String(got) : describe(got);
}

/** A number below its bound; `exclusive` when the bound itself is refused too. */
export function tooSmall(min: number | bigint, got: unknown, exclusive = false): string {
  return `must be ${exclusive ? 'more than' : 'at least'} ${min}, got ${number(got)}`;
}

export function tooBig(max: number | bigint, got: unknown, exclusive = false): string {
  return `must be ${exclusive ? 'less than' : 'at most'} ${max}, got ${number(got)}`;
}

/** A repeated value; `firstAt` says where it first stood. */
export function duplicateOf(value: unknown, firstAt?: string): string {
  return `duplicates ${shown(value)}${firstAt === undefined ? '' : ` (already at ${firstAt})`}`;
}

/** An answer that picks one option twice. */
export function repeated(value: unknown): string {
  return `repeats ${shown(value)}; each option may be chosen once`;
}

/** Two bounds the wrong way round. */
export function minExceedsMax(lo: string, min: number, hi: string, max: number): string {
  return `${lo} (${min}) must not exceed ${hi} (${max})`;
}

/** What `fromZod` can tell apart, each given a rule code by the module that checks. */
export type Failure =
  | 'unknown_key'
  | 'missing'
  /** A required enum or literal left out (zod reports it as a wrong value, not a wrong type). */
  | 'missing_choice'
  | 'wrong_type'
  | 'not_object'
  | 'not_one_of'
  | 'too_small'
  | 'too_big'
  | 'too_short'
  | 'too_long';
export type RuleNames = Record<Failure, string>;

/** The tool inputs' rule codes (a length and a number share `too_small`/`too_big`). */
export const ZOD_RULES: RuleNames = {
  unknown_key: 'unknown_key',
  missing: 'missing',
  missing_choice: 'invalid_value',
  wrong_type: 'invalid_type',
  not_object: 'invalid_type',
  not_one_of: 'invalid_value',
  too_small: 'too_small',
  too_big: 'too_big',
  too_short: 'too_small',
  too_long: 'too_big',
};

export interface FromZodOptions extends Where {
  /** Where `root` sits in the input, when the schema checked only part of it. */
  base?: readonly Segment[];
  rules?: Partial<RuleNames>;
}

// Naming the keys that are allowed is the quickest fix for a typo, so walk the schema to the object that refused one.
function keysAt(schema: z.core.$ZodType | null, at: readonly Segment[]): string[] {
  let node: unknown = schema;
  for (const seg of [...at, null]) {
    while (node instanceof z.ZodOptional || node instanceof z.ZodNullable) node = node.unwrap();
    if (seg === null) break;
    if (node instanceof z.ZodObject) node = Object.hasOwn(node.shape, seg) ? (node.shape as Record<string, unknown>)[String(seg)] : undefined;
    else if (node instanceof z.ZodArray) node = node.element;
    else if (node instanceof z.ZodRecord) node = node.valueType;
    else return [];
  }
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

const LENGTHS = new Set(['string', 'array', 'set']);

function sizeIssue(iss: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, got: unknown): { failure: Failure; message: string } {
  const small = iss.code === 'too_small';
  const limit = small ? iss.minimum : iss.maximum;
  if (!LENGTHS.has(iss.origin)) {
    const exclusive = iss.inclusive === false;
    return small ? { failure: 'too_small', message: tooSmall(limit, got, exclusive) } : { failure: 'too_big', message: tooBig(limit, got, exclusive) };
  }
  const n = Number(limit);
  if (typeof got === 'string') {
    // A trimming schema counts what is left after the trim: say so, or "got 3" would puzzle whoever sent "   ".
    const trimmed = got.trim().length;
    if (small) return { failure: 'too_short', message: tooShort(n, trimmed, 'character') + (trimmed === got.length ? '' : ' after trimming') };
    return { failure: 'too_long', message: tooLong(n, trimmed > n ? trimmed : got.length, 'character') };
  }
  const length = Array.isArray(got) ? got.length : got instanceof Set ? got.size : 0;
  return small ? { failure: 'too_short', message: tooShort(n, length, 'entry') } : { failure: 'too_long', message: tooLong(n, length, 'entry') };
}

/**
 * zod's issues in this kit's words. `schema` (when given) names the allowed keys of an object that refused one; `root`
 * is the value that was parsed, so a message can say what was received; `rules` maps each failure to the module's
 * rule code. Refinements carry their rule in `params.rule`; any other code keeps zod's message.
 */
export function fromZod(schema: z.core.$ZodType | null, issues: readonly z.core.$ZodIssue[], root: unknown, options: FromZodOptions = {}): FieldIssue[] {
  const rules: RuleNames = { ...ZOD_RULES, ...options.rules };
  const base = options.base ?? [];
  return issues.flatMap((iss): FieldIssue[] => {
    const rel = segments(iss.path);
    const at = [...base, ...rel];
    const got = valueAt(root, rel);
    const make = (failure: Failure, message: string) => [issue(at, rules[failure], message, options)];
    switch (iss.code) {
      case 'unrecognized_keys': {
        const allowed = keysAt(schema, rel);
        return iss.keys.map((k) => issue([...at, k], rules.unknown_key, unknownKey(allowed), options));
      }
      case 'invalid_type': {
        const expected = article(iss.expected);
        if (got === undefined) return make('missing', missing(expected));
        return make(iss.expected === 'object' || iss.expected === 'record' ? 'not_object' : 'wrong_type', wrongType(expected, got));
      }
      case 'invalid_value':
        if (got === undefined) return make('missing_choice', missing(oneOf(iss.values)));
        return make('not_one_of', notOneOf(iss.values, got));
      case 'too_small':
      case 'too_big': {
        const { failure, message } = sizeIssue(iss, got);
        return make(failure, message);
      }
      case 'custom': {
        const rule: unknown = iss.params?.rule;
        return [issue(at, typeof rule === 'string' ? rule : 'invalid', iss.message, options)];
      }
      default:
        return [issue(at, iss.code, iss.message, options)];
    }
  });
}
