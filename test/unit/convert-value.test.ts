import { describe, expect, it } from 'vitest';
import { convertForField } from '../../kit/core/convert-value.js';
import type { PropertySchema } from '../../shared/requested-schema.js';

const integer: PropertySchema = { type: 'integer', minimum: 0 };
const number: PropertySchema = { type: 'number' };
const boolean: PropertySchema = { type: 'boolean' };
const text: PropertySchema = { type: 'string', maxLength: 5 };
const url: PropertySchema = { type: 'string', format: 'uri' };
const plainEnum: PropertySchema = { type: 'string', enum: ['Asset Manager', 'REIT', '1'], enumNames: ['Asset manager', 'Real estate', 'One'] };
const titled: PropertySchema = { type: 'string', oneOf: [{ const: 'gold', title: 'Gold tier' }, { const: 'silver', title: 'Silver tier' }] };
const clash: PropertySchema = { type: 'string', enum: ['a', 'A'] };
const multi: PropertySchema = { type: 'array', items: { enum: ['Asset Manager', 'Private Equity', 'REIT'] } };
const titledMulti: PropertySchema = { type: 'array', items: { anyOf: [{ const: 'pe', title: 'Private Equity' }, { const: 'hf', title: 'Hedge Fund' }] } };

describe('convertForField: converts when nothing is lost', () => {
  it.each<[string, PropertySchema, unknown, unknown]>([
    ['an integer as is', integer, 230, 230],
    ['numeric text to an integer', integer, '230', 230],
    ['numeric text with surrounding spaces', integer, ' 230 ', 230],
    ['a negative integer text (range is the validator\'s business)', integer, '-4', -4],
    ['a whole number written with a fraction', integer, '230.0', 230],
    ['an exponent that makes a whole number', integer, '2.3e2', 230],
    ['a large exact integer', integer, '123456789012345', 123456789012345],
    ['a float as is', number, 2.5, 2.5],
    ['decimal text to a number', number, '2.50', 2.5],
    ['boolean as is', boolean, false, false],
    ['"true" to true', boolean, 'true', true],
    ['"FALSE" to false, ignoring case and spaces', boolean, ' FALSE ', false],
    ['text as is, even past maxLength (the validator flags it)', text, 'longer than five', 'longer than five'],
    ['text keeps its spaces', text, ' a ', ' a '],
    ['a number to text, as the cell shows it', text, 230, '230'],
    ['a URL stays text (format is the validator\'s business)', url, 'not a url', 'not a url'],
    ['an enum value exactly', plainEnum, 'REIT', 'REIT'],
    ['an enum value by its title', plainEnum, 'Real estate', 'REIT'],
    ['an enum value ignoring case', plainEnum, 'reit', 'REIT'],
    ['an enum value by its title ignoring case and spaces', plainEnum, '  real ESTATE ', 'REIT'],
    ['a number matching an enum value', plainEnum, 1, '1'],
    ['a titled option by its title', titled, 'Gold tier', 'gold'],
    ['a titled option by its value ignoring case', titled, 'SILVER', 'silver'],
    ['exact value wins over a case-insensitive clash', clash, 'A', 'A'],
    ['a list of options', multi, ['REIT', 'Asset Manager'], ['REIT', 'Asset Manager']],
    ['a list matched ignoring case, repeats once', multi, ['reit', 'REIT', 'private equity'], ['REIT', 'Private Equity']],
    ['an empty list', multi, [], []],
    ['one option\'s text as a one-item list', multi, 'REIT', ['REIT']],
    ['titled multi options by title', titledMulti, ['Hedge Fund', 'pe'], ['hf', 'pe']],
  ])('%s', (_name, schema, value, expected) => {
    expect(convertForField(schema, value)).toEqual({ ok: true, value: expected });
  });
});

describe('convertForField: refuses what would change or lose the value, and says why', () => {
  it.each<[string, PropertySchema, unknown, string]>([
    ['text that is not a number', integer, 'abc', '"abc" is not a number'],
    ['a number with a thousands separator', integer, '1,000', '"1,000" is not a number'],
    ['a number with leading zeros (an identifier, perhaps)', integer, '007', '"007" is not a number'],
    ['hexadecimal', number, '0x1A', '"0x1A" is not a number'],
    ['an empty text', number, '', '"" is not a number'],
    ['a fraction into an integer', integer, 3.5, '3.5 is not a whole number'],
    ['fraction text into an integer', integer, '3.5', '"3.5" is not a whole number'],
    ['more digits than a double keeps', integer, '12345678901234567', '"12345678901234567" has more digits than a number keeps'],
    ['an overflowing exponent', number, '1e999', '"1e999" is not a finite number'],
    ['a yes/no into a number', number, true, 'a yes/no value (Yes) is not a number'],
    ['a list into a number', integer, [1], 'a list is not a number'],
    ['"yes" into a boolean', boolean, 'yes', '"yes" is not true or false'],
    ['1 into a boolean', boolean, 1, '1 is not true or false'],
    ['a yes/no into text (the cell shows it as Yes/No)', text, false, 'a yes/no value (No) is not text'],
    ['a list into text', text, ['a'], 'a list is not text'],
    ['an object into text', text, { a: 1 }, 'an object is not text'],
    ['a value that is not an option', plainEnum, 'Bank', '"Bank" is not one of the options'],
    ['a value matching two options ignoring case', clash, ' a ', '" a " matches several options (a, A)'],
    ['a yes/no into an enum', titled, true, 'a yes/no value (Yes) is not one of the options'],
    ['a list with one item that is not an option', multi, ['REIT', 'Bank'], '"Bank" is not one of the options'],
    ['a list with several items that are not options: none is dropped', multi, ['Bank', 'REIT', 'Fund'], '"Bank", "Fund" are not options'],
    ['a list with an item that is not text', multi, ['REIT', { x: 1 }], 'an object is not one of the options'],
    ['text that is not one option', multi, 'REIT, Bank', '"REIT, Bank" is not a list of the options'],
    ['an empty cell', text, null, 'the cell is empty'],
    ['a long value is clipped in the reason', integer, 'x'.repeat(60), `${JSON.stringify('x'.repeat(60)).slice(0, 39)}… is not a number`],
  ])('%s', (_name, schema, value, reason) => {
    expect(convertForField(schema, value)).toEqual({ ok: false, reason });
  });
});
