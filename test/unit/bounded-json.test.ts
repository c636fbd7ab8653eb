import { describe, expect, it } from 'vitest';
import { CUT_MARKER, boundedJson } from '../../server/mcp/bounded-json.js';

const ECHO = { maxBytes: 16 * 1024, maxDepth: 32, indent: 2 };
const written = (value: unknown) => Buffer.byteLength(JSON.stringify(value, null, 2), 'utf8');

/** Parsed from text, as the transport gets it: building it with objects would need the recursion under test. */
const deep = (levels: number): unknown => JSON.parse(`${'{"a":['.repeat(levels)}1${']}'.repeat(levels)}`);

describe('boundedJson', () => {
  it('copies a value 100,000 levels deep without RangeError, cut at the depth bound', () => {
    const { value, truncated } = boundedJson(deep(100_000), { maxDepth: 64, maxBytes: Number.POSITIVE_INFINITY });
    expect(truncated).toBe(true);
    const text = JSON.stringify(value);
    expect(text).toContain(CUT_MARKER);
    expect(text.replaceAll(CUT_MARKER, '').split('[').length - 1).toBe(32);
  });

  it('returns what fits unchanged, absent members staying absent', () => {
    const value = { name: 'host', version: '1.2', caps: { elicitation: { form: {} }, list: [1, true, null, 'x'] } };
    expect(boundedJson(value, ECHO)).toEqual({ value, truncated: false });
    expect(boundedJson(undefined, ECHO)).toEqual({ value: undefined, truncated: false });
  });

  it.each([
    ['a long ASCII string', { s: 'x'.repeat(1_000_000) }],
    ['escapes (6 bytes each as JSON)', { s: '\u0000'.repeat(100_000) }],
    ['4-byte characters', { s: '😀'.repeat(100_000) }],
    ['many members', Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key${i}`, i]))],
    ['a long key', { ['k'.repeat(1_000_000)]: 1 }],
    ['a wide and deep array', { arr: Array.from({ length: 100_000 }, () => [[[[1, 2, 3]]]]) }],
  ])('%s: written indented, the copy stays within the budget and says it was cut', (_name, value) => {
    const bounded = boundedJson(value, ECHO);
    expect(bounded.truncated).toBe(true);
    expect(written(bounded.value)).toBeLessThanOrEqual(ECHO.maxBytes);
    expect(JSON.stringify(bounded.value)).toContain(CUT_MARKER);
  });

  it('a member named __proto__ stays a member, not a prototype', () => {
    const { value } = boundedJson(JSON.parse('{"__proto__":{"polluted":true}}'), ECHO);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"polluted":true}}');
  });
});
