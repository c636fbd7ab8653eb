// What the review's editors need from a property besides its value: the browser input for a string's format, the
// local-time form of a date-time, and the constraints to show as a hint. Pure and free of the DOM, so the rules are
// table-tested; the checking itself stays in requested-schema.ts (validateValues), the one validator.
import type { PropertySchema } from '../../shared/requested-schema.js';

export type TextInputType = 'text' | 'email' | 'url' | 'date' | 'datetime-local';

export function inputTypeFor(schema: PropertySchema): TextInputType {
  const format = 'format' in schema ? schema.format : undefined;
  switch (format) {
    case 'email': return 'email';
    case 'uri': return 'url';
    case 'date': return 'date';
    case 'date-time': return 'datetime-local';
    default: return 'text';
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$/i;
const LOCAL = /^(\d{4,6})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

/** A UTC instant from calendar fields; unlike Date.UTC, years 0-99 stay years 0-99. */
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, ms);
  return t.getTime();
}

/** Whether the browser's date and datetime inputs can show the string exactly; otherwise a text box does. */
function realDate(y: number, mo: number, d: number): boolean {
  const t = new Date(utc(y, mo, d, 0, 0, 0, 0));
  return y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/**
 * Whether `<input type>` shows `value` as it is. The browser strips surrounding whitespace and line breaks from email
 * and URL inputs, and a date input shows nothing for a string that is not a date: the editor must then be a text box,
 * so the person sees the real value (and the validator's message about it).
 */
export function fitsInput(type: TextInputType, value: string): boolean {
  switch (type) {
    case 'text': return true;
    case 'email':
    case 'url': return !/^[\t\n\f\r ]|[\t\n\f\r ]$|[\r\n]/.test(value);
    case 'date': {
      const m = DATE.exec(value);
      return m !== null && realDate(Number(m[1]), Number(m[2]), Number(m[3]));
    }
    case 'datetime-local': return toLocalDateTime(value) !== null;
  }
}

/** The instant an RFC 3339 date-time names, or null when it is not one (or holds more than milliseconds). */
function instant(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  const fraction = m[7] ?? '';
  // A datetime-local input keeps milliseconds; finer digits would be shown rounded, so they go to a text box.
  if (y === undefined || mo === undefined || d === undefined || h === undefined || mi === undefined || s === undefined) return null;
  if (fraction.length > 3 || !realDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return null;
  const offset = m[8]?.toUpperCase() === 'Z' ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  if (Math.abs(offset) >= 24 * 60) return null;
  return utc(y, mo, d, h, mi, s, Number(fraction.padEnd(3, '0'))) - offset * 60_000;
}

/**
 * An RFC 3339 date-time as a datetime-local input's value in this browser's time zone, in the input's own shortest
 * form (seconds only when set), so the browser does not rewrite it while the person edits; null when it cannot show it.
 */
export function toLocalDateTime(value: string): { value: string; step?: number } | null {
  const at = instant(value);
  if (at === null) return null;
  const t = new Date(at);
  const y = t.getFullYear();
  if (y < 1 || y > 9999) return null;
  const s = t.getSeconds();
  const ms = t.getMilliseconds();
  const base = `${pad(y, 4)}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
  if (ms) return { value: `${base}:${pad(s)}.${pad(ms, 3).replace(/0+$/, '')}`, step: 0.001 };
  if (s) return { value: `${base}:${pad(s)}`, step: 1 };
  return { value: base };
}

/** The offset of this browser's time zone at an instant, in minutes east of UTC (fractional for old local mean times). */
function offsetAt(t: Date): number {
  const local = utc(t.getFullYear(), t.getMonth() + 1, t.getDate(), t.getHours(), t.getMinutes(), t.getSeconds(), t.getMilliseconds());
  return (local - t.getTime()) / 60_000;
}

/** `+01:00`, `-03:30`, `+00:00`. */
export function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function rfc3339(t: Date, utcOnly: boolean): string {
  const offset = utcOnly ? 0 : offsetAt(t);
  const at = new Date(t.getTime() + offset * 60_000);
  const ms = at.getUTCMilliseconds();
  const date = `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}`;
  const time = `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`;
  return `${date}T${time}${utcOnly ? 'Z' : offsetText(offset)}`;
}

/**
 * A datetime-local value (this browser's local time) as RFC 3339 with the person's offset at that moment:
 * `2026-11-30T17:05` in Paris is `2026-11-30T17:05:00+01:00`. A local time that does not exist (the hour skipped when
 * clocks go forward) becomes the time the browser moves it to, which the editor then shows. null for anything else.
 */
export function fromLocalDateTime(local: string): string | null {
  const m = LOCAL.exec(local);
  if (!m) return null;
  const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
  if (y === undefined || mo === undefined || d === undefined || h === undefined || mi === undefined) return null;
  if (!realDate(y, mo, d) || h > 23 || mi > 59) return null;
  const t = new Date(0);
  t.setFullYear(y, mo - 1, d);
  t.setHours(h, mi, Number(m[6] ?? 0), Number((m[7] ?? '').padEnd(3, '0')));
  // An offset in seconds (local mean time before 1900) cannot be written in RFC 3339; the same instant in UTC can.
  return rfc3339(t, !Number.isInteger(offsetAt(t)));
}

/** "Your local time (UTC+01:00)": the zone the date-time editor shows, at the value's instant (or now). */
export function localTimeHint(value: unknown, now = Date.now()): string {
  const at = typeof value === 'string' ? instant(value) : null;
  const minutes = offsetAt(new Date(at ?? now));
  return `Your local time (UTC${offsetText(Math.round(minutes))})`;
}

function range(min: number | undefined, max: number | undefined, unit = ''): string | null {
  const u = (n: number) => (unit === '' ? '' : ` ${unit}${n === 1 ? '' : 's'}`);
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}${u(min)}` : `${min}–${max}${u(max)}`;
  if (min !== undefined) return `at least ${min}${u(min)}`;
  if (max !== undefined) return `at most ${max}${u(max)}`;
  return null;
}

/** The property's limits in words, shown under its editor (the validator checks them as the person types). */
export function constraintHint(schema: PropertySchema): string | null {
  if (schema.type === 'array') {
    const r = range(schema.minItems, schema.maxItems);
    return r === null ? null : `Choose ${r}`;
  }
  if (schema.type === 'number' || schema.type === 'integer') {
    const { minimum: min, maximum: max } = schema;
    const noun = schema.type === 'integer' ? 'A whole number' : 'A number';
    if (min !== undefined && max !== undefined) return min === max ? `${noun}: exactly ${min}` : `${noun} from ${min} to ${max}`;
    const r = range(min, max);
    if (r === null) return schema.type === 'integer' ? noun : null;
    return `${noun}, ${r}`;
  }
  if (schema.type === 'string' && !('enum' in schema) && !('oneOf' in schema)) {
    const r = range(schema.minLength, schema.maxLength, 'character');
    return r === null ? null : `${r.charAt(0).toUpperCase()}${r.slice(1)}`;
  }
  return null;
}
