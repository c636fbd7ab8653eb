// What the single-file pages (the chat's review, the phone page) leave out of zod: parts of classic zod that every
// schema drags in and neither page ever runs. The shared schemas are classic zod (the server builds its tools' JSON
// Schemas from them, with their `.describe()` texts), and classic attaches to every schema its JSON Schema generator,
// its cycle-safe parsing, its self-compiling object parser and, to every string, the string formats as methods:
// ~11 KB gzip of each page. zod/mini in shared/ would be the lasting fix. Each cut is found by its text in zod's
// files: when a zod update moves one, the build stops and says which (update the marker or drop the cut), rather than
// shipping a page that differs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The names a module exports (`export const|function|class x`, `export { a, b as c }`). */
function exportedNames(text) {
  const direct = [...text.matchAll(/^export (?:const|function|let|class) (\w+)/gm)].map((m) => m[1]);
  const listed = [...text.matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim().split(/\s+as\s+/).pop()));
  return [...new Set([...direct, ...listed].filter(Boolean))];
}

function moved(file, what) {
  return new Error(`lean-zod: zod/${file} no longer has ${what} (zod was updated): update or drop this cut in scripts/lean-zod.mjs`);
}

/**
 * A module whose every export is a function that throws, but `factories`, which return one; `expected` and
 * `factories` must be among its exports.
 */
function stubbed(text, file, { expected = [], factories = [] }) {
  const names = exportedNames(text);
  const missing = [...expected, ...factories].find((f) => !names.includes(f));
  if (missing) throw moved(file, missing);
  const none = "const none = () => { throw new Error('zod: JSON Schema is not in this page'); };";
  return `${none}\n${names.map((n) => `export const ${n} = ${factories.includes(n) ? '() => none' : 'none'};`).join('\n')}`;
}

/** Where, in classic zod's schemas.js, the ZodString methods start (after `}, {`) and end; and their names. */
function stringFormatMethods(text) {
  const start = text.indexOf('export const ZodString = ');
  const from = start < 0 ? -1 : text.indexOf('}, {\n', start);
  const to = from < 0 ? -1 : text.indexOf('\n});\nexport function string(', from);
  if (to < 0) throw moved('v4/classic/schemas.js', 'ZodString\'s methods where they were');
  return { from, to, names: [...text.slice(from, to).matchAll(/^ {4}(\w+)\(/gm)].map((m) => m[1]) };
}

const CUTS = {
  // The JSON Schema generator: every export a function that throws, the two per-schema factories giving one. So do
  // the getters that read a schema's constraints back (`minLength`, `isInt`, `format` …, through `aggregateChecks`):
  // no page reads them.
  'zod/v4/core/to-json-schema.js': (text) => stubbed(text, 'v4/core/to-json-schema.js', { factories: ['createToJSONSchemaMethod', 'createStandardJSONSchemaMethod'] }),
  'zod/v4/core/json-schema-processors.js': (text) => stubbed(text, 'v4/core/json-schema-processors.js', { expected: ['aggregateChecks'] }),
  // Parsing values that are reference cycles through recursive schemas: the pages have no recursive schema (JSON
  // through a non-recursive schema ends at the schema's depth). Without the memoizer, zod parses as zod/mini does.
  'zod/v4/core/memoizer.js': (text) => {
    const on = 'export function memoizer() {\n    return memo;\n}';
    if (!text.includes(on)) throw moved('v4/core/memoizer.js', 'memoizer() as it was');
    return text.replace(on, 'export function memoizer() {\n    return undefined;\n}');
  },
  // The object parser that compiles itself with `new Function`: the pages' CSP forbids eval (and main.tsx sets zod
  // jitless before any schema exists), so only the interpreted parser it falls back to ever runs.
  'zod/v4/core/schemas.js': (text) => {
    const start = text.indexOf('export const $ZodObjectJIT = ');
    const from = start < 0 ? -1 : text.indexOf('    const superParse = inst._zod.parse;\n', start);
    const to = from < 0 ? -1 : text.indexOf('\n});\n', from);
    if (to < 0 || !text.slice(from, to).trimEnd().endsWith('return superParse(payload, ctx);\n    };')) throw moved('v4/core/schemas.js', '$ZodObjectJIT as it was');
    return text.slice(0, from) + text.slice(to);
  },
  // z.string().email(), .url(), .uuid(), .datetime() … : the formats as methods, each with its schema class and regex.
  // Nothing in the pages uses one (the build refuses a source that calls one, below); z.email() and the like remain.
  'zod/v4/classic/schemas.js': (text) => {
    const { from, to } = stringFormatMethods(text);
    return `${text.slice(0, from)}}, {${text.slice(to)}`;
  },
};

/**
 * The vite plugin. `root`: the project's folder (with a trailing slash, forward slashes); none of its own modules may
 * call a string format method that was left out, and `.describe('…')` texts in its shared/ schemas (they feed the
 * server's tool schemas) are left out too.
 */
export function leanZod({ root }) {
  const zodDir = dirname(createRequire(`${root}package.json`).resolve('zod/package.json'));
  const removed = stringFormatMethods(readFileSync(join(zodDir, 'v4/classic/schemas.js'), 'utf8')).names;
  const calls = new RegExp(`\\)\\s*\\.(${removed.join('|')})\\(`);
  const ours = (path) => path.startsWith(root) && !path.includes('/node_modules/') && /\.tsx?$/.test(path);
  return {
    name: 'elicitly:lean-zod',
    enforce: 'pre',
    load(id) {
      const path = id.replaceAll('\\', '/');
      const file = Object.keys(CUTS).find((f) => path.endsWith(`/node_modules/${f}`));
      return file ? CUTS[file](readFileSync(path, 'utf8'), path) : null;
    },
    transform(code, id) {
      const path = id.replaceAll('\\', '/');
      if (!ours(path)) return null;
      const called = code.match(calls)?.[1];
      if (called) this.error(`${path} calls the string format .${called}(), which scripts/lean-zod.mjs leaves out of the pages: use z.${called}() or drop that cut`);
      if (!path.startsWith(`${root}shared/`)) return null;
      return code.replace(/\.describe\(\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\$]|\\.)*`)\s*\)/g, '');
    },
  };
}
