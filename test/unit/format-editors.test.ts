import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  constraintHint, fitsInput, fromLocalDateTime, inputTypeFor, localTimeHint, offsetText, toLocalDateTime, type TextInputType,
} from '../../kit/core/format-editors.js';
import type { PropertySchema } from '../../shared/requested-schema.js';

// Node re-reads TZ when it is assigned, so each block below runs in the zone it names.
const originalZone = process.env.TZ;
function inZone(zone: string): void {
  beforeAll(() => {
    process.env.TZ = zone;
  });
  afterAll(() => {
    process.env.TZ = originalZone;
  });
}

describe('inputTypeFor', () => {
  it.each<[PropertySchema, TextInputType]>([
    [{ type: 'string' }, 'text'],
    [{ type: 'string', format: 'email' }, 'email'],
    [{ type: 'string', format: 'uri' }, 'url'],
    [{ type: 'string', format: 'date' }, 'date'],
    [{ type: 'string', format: 'date-time' }, 'datetime-local'],
    [{ type: 'string', enum: ['a'] }, 'text'],
  ])('%j → %s', (schema, type) => {
    expect(inputTypeFor(schema)).toBe(type);
  });
});

describe('fitsInput: what a typed input shows exactly', () => {
  it.each<[TextInputType, string, boolean]>([
    ['text', ' anything\n', true],
    ['email', 'a@b.co', true],
    ['email', ' a@b.co', false],
    ['email', 'a@b.co\t', false],
    ['url', 'https://x.test/a b', true],
    ['url', 'https://x.test/\n', false],
    ['date', '2024-02-29', true],
    ['date', '2023-02-29', false],
    ['date', '0000-01-01', false],
    ['date', '2024-2-9', false],
    ['datetime-local', '2026-11-30T16:05:00Z', true],
    ['datetime-local', '2026-11-30T16:05:00.123456Z', false],
    ['datetime-local', '2026-11-30 16:05', false],
  ])('%s %j → %s', (type, value, fits) => {
    expect(fitsInput(type, value)).toBe(fits);
  });
});

describe('offsetText', () => {
  it.each<[number, string]>([[60, '+01:00'], [-210, '-03:30'], [0, '+00:00'], [345, '+05:45'], [-0, '+00:00']])('%d → %s', (minutes, text) => {
    expect(offsetText(minutes)).toBe(text);
  });
});

describe('date-time in Europe/Paris', () => {
  inZone('Europe/Paris');

  it.each<[string, string, { value: string; step?: number } | null]>([
    ['UTC shown as local winter time', '2026-11-30T16:05:00Z', { value: '2026-11-30T17:05' }],
    ['another offset, across midnight', '2026-11-30T16:05:00-08:00', { value: '2026-12-01T01:05' }],
    ['summer time', '2026-07-01T12:00:00+02:00', { value: '2026-07-01T12:00' }],
    ['lower-case t and z', '2026-11-30t16:05:00z', { value: '2026-11-30T17:05' }],
    ['seconds shown when set', '2026-11-30T16:05:30Z', { value: '2026-11-30T17:05:30', step: 1 }],
    ['milliseconds in the input\'s shortest form', '2026-11-30T16:05:30.250Z', { value: '2026-11-30T17:05:30.25', step: 0.001 }],
    ['finer than milliseconds cannot be shown exactly', '2026-11-30T16:05:00.1234Z', null],
    ['no offset is not RFC 3339', '2026-11-30T16:05:00', null],
    ['not a calendar date', '2026-02-30T00:00:00Z', null],
    ['hour 24', '2026-11-30T24:00:00Z', null],
    ['not a date-time', 'tomorrow', null],
  ])('toLocalDateTime: %s', (_name, value, local) => {
    expect(toLocalDateTime(value)).toEqual(local);
  });

  it.each<[string, string, string | null]>([
    ['winter: +01:00', '2026-11-30T17:05', '2026-11-30T17:05:00+01:00'],
    ['summer: +02:00', '2026-07-01T12:00', '2026-07-01T12:00:00+02:00'],
    ['with seconds', '2026-11-30T17:05:30', '2026-11-30T17:05:30+01:00'],
    ['with milliseconds', '2026-11-30T17:05:30.5', '2026-11-30T17:05:30.500+01:00'],
    ['the hour skipped in spring becomes the browser\'s reading of it', '2026-03-29T02:30', '2026-03-29T03:30:00+02:00'],
    ['the hour repeated in autumn is its first occurrence', '2026-10-25T02:30', '2026-10-25T02:30:00+02:00'],
    ['local mean time (an offset in seconds) is written in UTC', '1850-01-01T00:00', '1849-12-31T23:50:39Z'],
    ['a year before 100 stays that year', '0099-06-01T12:00', '0099-06-01T11:50:39Z'],
    ['not a calendar date', '2026-02-30T10:00', null],
    ['not a local date-time', '2026-11-30 17:05', null],
  ])('fromLocalDateTime: %s', (_name, local, value) => {
    expect(fromLocalDateTime(local)).toBe(value);
  });

  it.each(['2026-11-30T16:05:00Z', '2026-11-30T16:05:00-08:00', '2026-07-01T23:59:59.999+14:00', '1850-06-01T00:00:00Z'])(
    'the local form of %s names the same instant',
    (value) => {
      const local = toLocalDateTime(value);
      expect(Date.parse(fromLocalDateTime(local?.value ?? '') ?? '')).toBe(Date.parse(value));
    },
  );

  it.each<[unknown, string]>([
    ['2026-07-01T00:00:00Z', 'Your local time (UTC+02:00)'],
    ['2026-11-30T16:05:00Z', 'Your local time (UTC+01:00)'],
    [null, 'Your local time (UTC+01:00)'],
  ])('localTimeHint(%j): the offset at the value, or now', (value, hint) => {
    expect(localTimeHint(value, Date.UTC(2026, 0, 15))).toBe(hint);
  });
});

describe.each<[string, string, string, string]>([
  ['Asia/Kolkata', '2026-11-30T21:35', '2026-11-30T17:05:00+05:30', 'Your local time (UTC+05:30)'],
  ['America/St_Johns', '2026-11-30T12:35', '2026-11-30T17:05:00-03:30', 'Your local time (UTC-03:30)'],
  ['UTC', '2026-11-30T16:05', '2026-11-30T17:05:00+00:00', 'Your local time (UTC+00:00)'],
])('date-time in %s', (zone, shown, sent, hint) => {
  inZone(zone);

  it('shows 16:05Z as local time, sends local time with this offset, names the offset', () => {
    expect(toLocalDateTime('2026-11-30T16:05:00Z')?.value).toBe(shown);
    expect(fromLocalDateTime('2026-11-30T17:05')).toBe(sent);
    expect(localTimeHint('2026-11-30T16:05:00Z')).toBe(hint);
  });
});

describe('constraintHint', () => {
  it.each<[PropertySchema, string | null]>([
    [{ type: 'string' }, null],
    [{ type: 'string', minLength: 3 }, 'At least 3 characters'],
    [{ type: 'string', maxLength: 1 }, 'At most 1 character'],
    [{ type: 'string', minLength: 3, maxLength: 40 }, '3–40 characters'],
    [{ type: 'string', minLength: 4, maxLength: 4 }, 'Exactly 4 characters'],
    [{ type: 'string', format: 'email', maxLength: 100 }, 'At most 100 characters'],
    [{ type: 'string', enum: ['a'] }, null],
    [{ type: 'number' }, null],
    [{ type: 'number', minimum: 0 }, 'A number, at least 0'],
    [{ type: 'number', minimum: -1.5, maximum: 2.5 }, 'A number from -1.5 to 2.5'],
    [{ type: 'integer' }, 'A whole number'],
    [{ type: 'integer', maximum: 10 }, 'A whole number, at most 10'],
    [{ type: 'integer', minimum: 3, maximum: 3 }, 'A whole number: exactly 3'],
    [{ type: 'boolean' }, null],
    [{ type: 'array', items: { enum: ['a', 'b'] } }, null],
    [{ type: 'array', items: { enum: ['a', 'b'] }, minItems: 1 }, 'Choose at least 1'],
    [{ type: 'array', items: { enum: ['a', 'b'] }, minItems: 1, maxItems: 2 }, 'Choose 1–2'],
  ])('%j → %s', (schema, hint) => {
    expect(constraintHint(schema)).toBe(hint);
  });
});
