// Double-click copy in the proposal grid (seed 004): a Source or Current cell's value becomes the field's Proposed
// value. Cells hold whatever the agent's systems returned ("230" for an integer, "asset manager" for an option), so
// the value is converted to the field's type — but only when nothing is lost; otherwise the cell says why and Proposed
// stays as it was. Range, length and format are not conversion: the copied value is shown and the shared validator
// flags it as the person sees it.
import { clip } from '../../shared/field-issues.js';
import { enumOptions, propertyKind, type PropertySchema } from '../../shared/requested-schema.js';

export type Conversion = { ok: true; value: unknown } | { ok: false; reason: string };

// JSON's number grammar, so "007", "0x1A", "1,000" and "Infinity" are refused rather than read as something else.
const NUMBER_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
// A double holds 15 significant decimal digits exactly; a longer number would reach the agent changed.
const MAX_DIGITS = 15;

/** A grid cell's reason is one short line: the value it names is cut at 40 characters. */
const SHOWN_CHARS = 40;

/** The value as the reason names it; strings quoted, so a blank or a space is visible. */
function shown(v: unknown): string {
  if (typeof v === 'string') return clip(JSON.stringify(v), SHOWN_CHARS);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return `a yes/no value (${v ? 'Yes' : 'No'})`;
  if (Array.isArray(v)) return 'a list';
  return 'an object';
}

function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/[eE].*$/, '').replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

function toNumber(v: unknown, integer: boolean): Conversion {
  let n: number;
  if (typeof v === 'number') {
    n = v;
  } else if (typeof v === 'string') {
    const text = v.trim();
    if (!NUMBER_TEXT.test(text)) return { ok: false, reason: `${shown(v)} is not a number` };
    if (significantDigits(text) > MAX_DIGITS) return { ok: false, reason: `${shown(v)} has more digits than a number keeps` };
    n = Number(text);
  } else {
    return { ok: false, reason: `${shown(v)} is not a number` };
  }
  if (!Number.isFinite(n)) return { ok: false, reason: `${shown(v)} is not a finite number` };
  if (integer && !Number.isInteger(n)) return { ok: false, reason: `${shown(v)} is not a whole number` };
  return { ok: true, value: n };
}

function toBoolean(v: unknown): Conversion {
  if (typeof v === 'boolean') return { ok: true, value: v };
  const text = typeof v === 'string' ? v.trim().toLowerCase() : '';
  if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' };
  return { ok: false, reason: `${shown(v)} is not true or false` };
}

function toText(v: unknown): Conversion {
  if (typeof v === 'string') return { ok: true, value: v };
  // The cell shows a number as String(n), so that is exactly what is copied.
  if (typeof v === 'number' && Number.isFinite(v)) return { ok: true, value: String(v) };
  return { ok: false, reason: `${shown(v)} is not text` };
}

type Option = { value: string; title: string };

/**
 * One option for a cell's text: its value exactly, else its title exactly, else the one option whose value or title
 * equals it ignoring case and surrounding spaces. Two candidates are refused: choosing between them is the person's call.
 */
function matchOption(options: readonly Option[], text: string): { value: string } | { several: Option[] } | null {
  const exact = options.find((o) => o.value === text);
  if (exact) return { value: exact.value };
  const fold = (s: string) => s.trim().toLowerCase();
  for (const same of [(o: Option) => o.title === text, (o: Option) => fold(o.value) === fold(text) || fold(o.title) === fold(text)]) {
    const found = options.filter(same);
    if (found.length === 1 && found[0]) return { value: found[0].value };
    if (found.length > 1) return { several: found };
  }
  return null;
}

function optionText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : null;
}

function toOption(options: readonly Option[], v: unknown): Conversion {
  const text = optionText(v);
  if (text === null) return { ok: false, reason: `${shown(v)} is not one of the options` };
  const match = matchOption(options, text);
  if (match === null) return { ok: false, reason: `${shown(v)} is not one of the options` };
  if ('several' in match) return { ok: false, reason: `${shown(v)} matches several options (${match.several.map((o) => o.title).join(', ')})` };
  return { ok: true, value: match.value };
}

/** Every item must be an option: dropping the others would copy less than the cell shows. */
function toOptions(options: readonly Option[], v: unknown): Conversion {
  if (!Array.isArray(v)) {
    // One option's text is a one-item choice; anything else is not a list of options.
    const one = optionText(v) === null ? null : toOption(options, v);
    return one?.ok ? { ok: true, value: [one.value] } : { ok: false, reason: `${shown(v)} is not a list of the options` };
  }
  const chosen: string[] = [];
  const missing: string[] = [];
  const ambiguous: string[] = [];
  for (const item of v) {
    const text = optionText(item);
    const match = text === null ? null : matchOption(options, text);
    if (match === null) missing.push(shown(item));
    else if ('several' in match) ambiguous.push(shown(item));
    else if (!chosen.includes(match.value)) chosen.push(match.value);
  }
  if (missing.length === 1) return { ok: false, reason: `${missing[0]} is not one of the options` };
  if (missing.length > 1) return { ok: false, reason: `${missing.join(', ')} are not options` };
  if (ambiguous.length) return { ok: false, reason: `${ambiguous.join(', ')} matches several options` };
  return { ok: true, value: chosen };
}

/** A cell's value as the field's editor holds it, when that loses nothing. */
export function convertForField(schema: PropertySchema, value: unknown): Conversion {
  if (value === null || value === undefined) return { ok: false, reason: 'the cell is empty' };
  switch (propertyKind(schema)) {
    case 'integer': return toNumber(value, true);
    case 'number': return toNumber(value, false);
    case 'boolean': return toBoolean(value);
    case 'string': return toText(value);
    case 'enum': return toOption(enumOptions(schema), value);
    case 'multi': return toOptions(enumOptions(schema), value);
  }
}
