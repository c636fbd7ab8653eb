import { enumOptions, type PropertySchema } from '../../../shared/requested-schema.js';

/** A read-only cell's text: options by their titles, lists comma-separated, a blank for nothing. */
export function displayValue(schema: PropertySchema | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  const titles = new Map(schema ? enumOptions(schema).map((o) => [o.value, o.title] as const) : []);
  const one = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'string') return titles.get(v) ?? v;
    if (typeof v === 'boolean') return v ? 'Yes' : 'No';
    if (typeof v === 'number') return String(v);
    return JSON.stringify(v) ?? '';
  };
  return Array.isArray(value) ? value.map(one).join(', ') : one(value);
}
