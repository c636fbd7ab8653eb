// The JSON Schemas a tool lists, in the form every client reads: some map tool schemas onto a single-`type` dialect
// (Gemini's OpenAPI subset) or drop a schema that says nothing, and the MCP Inspector warns on each such tool. The
// rules are the Inspector's schema lint (core/json/schemaLint.ts, "Schema portability"): `portabilityFindings` runs
// them, `portableSchema` rewrites what zod emits into the form they accept, with the same meaning. Plain JSON in and
// out: no zod here.

export type PortabilityRule = 'boolean-schema' | 'type-union' | 'remote-ref' | 'untyped-schema';

export interface PortabilityFinding {
  rule: PortabilityRule;
  /** Where, as the Inspector writes it: `properties.values.additionalProperties`, `anyOf[1].items`; '' is the root. */
  path: string;
  message: string;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const JSON_TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);

/** Keywords after which a schema constrains its value; a schema with none of them accepts anything. */
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
  'pattern', 'format', 'contentMediaType', 'contentEncoding', 'contentSchema', 'maxItems', 'minItems', 'uniqueItems', 'maxContains',
  'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'allOf', 'anyOf', 'oneOf', 'not', 'items',
  'prefixItems', 'contains', 'additionalItems', 'unevaluatedItems', 'properties', 'patternProperties', 'additionalProperties',
  'unevaluatedProperties', 'propertyNames', 'dependentSchemas', 'dependencies', '$ref', '$dynamicRef', '$recursiveRef',
]);

/** Where a bare boolean is a value's rule rather than a schema standing in for one. */
const BOOLEAN_ALLOWED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);

const MAPS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'] as const;
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SINGLES = [
  'items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'additionalItems',
  'unevaluatedItems', 'contentSchema',
] as const;

/** The deepest the walk goes, as the Inspector's (deeper nodes are neither checked nor rewritten). */
const MAX_DEPTH = 64;

const segment = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);
const join = (path: string, key: string) => (path === '' ? segment(key).replace(/^\./, '') : `${path}${segment(key)}`);

interface Child { node: unknown; path: string; keyword: string }

/** Every subschema position of `node` (instance data such as `default`, `examples` and `const` is not one). */
function children(node: Json, path: string): Child[] {
  const out: Child[] = [];
  for (const keyword of MAPS) {
    const map = node[keyword];
    if (!isObject(map)) continue;
    for (const [name, child] of Object.entries(map)) {
      // `dependencies` also has a property-list form (an array): not a schema.
      if (!Array.isArray(child)) out.push({ node: child, path: join(join(path, keyword), name), keyword });
    }
  }
  for (const keyword of LISTS) {
    const list = node[keyword];
    if (Array.isArray(list)) list.forEach((child, i) => out.push({ node: child, path: `${join(path, keyword)}[${i}]`, keyword }));
  }
  for (const keyword of SINGLES) {
    const child = node[keyword];
    if (keyword === 'items' && Array.isArray(child)) child.forEach((c, i) => out.push({ node: c, path: `${join(path, keyword)}[${i}]`, keyword }));
    else if (child !== undefined) out.push({ node: child, path: join(path, keyword), keyword });
  }
  return out;
}

function constrains(node: Json): boolean {
  if ('if' in node && ('then' in node || 'else' in node)) return true;
  return Object.keys(node).some((key) => CONSTRAINING.has(key));
}

function wellFormedTypeUnion(type: unknown): type is string[] {
  return Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string' && JSON_TYPES.has(t)) && new Set(type).size === type.length;
}

function hasId(node: unknown, depth = 0): boolean {
  if (!isObject(node) || depth > MAX_DEPTH) return false;
  if (typeof node.$id === 'string' && node.$id !== '') return true;
  return children(node, '').some((c) => hasId(c.node, depth + 1));
}

/** What the Inspector's schema lint says of `schema` (a tool's inputSchema or outputSchema), in walk order. */
export function portabilityFindings(schema: unknown): PortabilityFinding[] {
  const findings: PortabilityFinding[] = [];
  const remoteRefsChecked = !hasId(schema);
  const walk = (node: unknown, path: string, keyword: string | null, depth: number) => {
    if (depth > MAX_DEPTH) return;
    if (typeof node === 'boolean') {
      if (keyword === null || !BOOLEAN_ALLOWED.has(keyword)) findings.push({ rule: 'boolean-schema', path, message: `bare \`${String(node)}\` where a schema object is expected` });
      return;
    }
    if (!isObject(node)) return;
    if (wellFormedTypeUnion(node.type)) findings.push({ rule: 'type-union', path, message: `\`type\` is an array (${JSON.stringify(node.type)})` });
    if (remoteRefsChecked && typeof node.$ref === 'string' && node.$ref !== '' && !node.$ref.startsWith('#')) {
      findings.push({ rule: 'remote-ref', path, message: `\`$ref\` points outside this document (${node.$ref})` });
    }
    if (keyword !== 'not' && !constrains(node)) findings.push({ rule: 'untyped-schema', path, message: 'carries no validation keyword, so it accepts any value' });
    for (const child of children(node, path)) walk(child.node, child.path, child.keyword, depth + 1);
  };
  walk(schema, '', null, 0);
  return findings;
}

/** Any JSON value, spelled with explicit types (`integer` is a `number`). */
const anyValue = (): Json => ({ anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })) });

/**
 * `schema` with the same meaning in the form `portabilityFindings` accepts: a schema that constrains nothing (`{}`, a
 * description alone, a bare `true` where a schema belongs) becomes "any of these explicit types", or `true` as the
 * rule for additional properties or items (`additionalProperties: {}` is `additionalProperties: true`); a bare `false`
 * becomes `{ not: {} }`; `type: [a, b]` becomes `anyOf` branches of one type each (beside an `anyOf` already there,
 * both under `allOf`). The input is not changed.
 */
export function portableSchema<T>(schema: T): T {
  const rewrite = (node: unknown, keyword: string | null, depth: number): unknown => {
    if (depth > MAX_DEPTH) return node;
    if (typeof node === 'boolean') {
      if (keyword !== null && BOOLEAN_ALLOWED.has(keyword)) return node;
      return node ? anyValue() : { not: {} };
    }
    if (!isObject(node)) return node;
    const out: Json = { ...node };
    for (const keyword of MAPS) {
      const map = node[keyword];
      if (isObject(map)) out[keyword] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, Array.isArray(v) ? v : rewrite(v, keyword, depth + 1)]));
    }
    for (const keyword of LISTS) {
      const list = node[keyword];
      if (Array.isArray(list)) out[keyword] = list.map((v) => rewrite(v, keyword, depth + 1));
    }
    for (const keyword of SINGLES) {
      const child = node[keyword];
      if (keyword === 'items' && Array.isArray(child)) out[keyword] = child.map((v) => rewrite(v, keyword, depth + 1));
      else if (child !== undefined) out[keyword] = rewrite(child, keyword, depth + 1);
    }
    if (wellFormedTypeUnion(node.type)) {
      const branches = node.type.map((type) => ({ type }));
      delete out.type;
      if (Array.isArray(out.anyOf)) {
        out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: out.anyOf }, { anyOf: branches }];
        delete out.anyOf;
      } else {
        out.anyOf = branches;
      }
    }
    // Under `not`, `{}` is the exact "anything", which the lint accepts there; where a boolean is the rule for the other
    // properties or items, `true` says "any value" in fewer bytes (the schemas are read by the model too).
    if (keyword !== null && BOOLEAN_ALLOWED.has(keyword) && Object.keys(out).length === 0) return true;
    if (keyword !== 'not' && !constrains(out)) return { ...out, ...anyValue() };
    return out;
  };
  return rewrite(schema, null, 0) as T;
}
