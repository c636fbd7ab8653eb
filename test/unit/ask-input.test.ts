import { describe, expect, it } from 'vitest';
import type { SelectionAsk } from '../../shared/ask-input.js';
import { askResult, checkAskValues, checkSelectionInput, resolveConfirmInput, selectedFromHost, selectionIssues, selectionRequestedSchema } from '../../shared/ask-input.js';

const options = [{ value: 'a', label: 'Alpha' }, { value: 'b' }, { value: 'c', description: 'the third' }];
const base = { message: 'Pick', options };

describe('checkSelectionInput refuses, naming the field and the rule', () => {
  const deep: unknown = [0];
  let cursor = deep as unknown[];
  for (let i = 0; i < 40; i++) {
    const inner: unknown[] = [];
    cursor.push(inner);
    cursor = inner;
  }

  it.each([
    ['not an object', 'pick one', '(request)', 'not_object'],
    ['a missing message', { options }, 'message', 'missing'],
    ['an empty message', { ...base, message: '   ' }, 'message', 'too_small'],
    ['a message over 4000 characters', { ...base, message: 'm'.repeat(4001) }, 'message', 'too_big'],
    ['a message that is a number', { ...base, message: 7 }, 'message', 'invalid_type'],
    ['missing options', { message: 'Pick' }, 'options', 'missing'],
    ['empty options', { ...base, options: [] }, 'options', 'too_small'],
    ['101 options', { ...base, options: Array.from({ length: 101 }, (_, i) => ({ value: `v${i}` })) }, 'options', 'too_big'],
    ['options that are not a list', { ...base, options: { value: 'a' } }, 'options', 'invalid_type'],
    ['an option that is a string', { ...base, options: ['a'] }, 'options[0]', 'invalid_type'],
    ['an option without a value', { ...base, options: [{ label: 'A' }] }, 'options[0].value', 'missing'],
    ['an empty option value', { ...base, options: [{ value: '' }] }, 'options[0].value', 'too_small'],
    ['an option value over 200 characters', { ...base, options: [{ value: 'v'.repeat(201) }] }, 'options[0].value', 'too_big'],
    ['a blank label', { ...base, options: [{ value: 'a', label: '  ' }] }, 'options[0].label', 'too_small'],
    ['a description over 1000 characters', { ...base, options: [{ value: 'a', description: 'd'.repeat(1001) }] }, 'options[0].description', 'too_big'],
    ['an unknown key in an option', { ...base, options: [{ value: 'a', title: 'A' }] }, 'options[0].title', 'unknown_key'],
    ['duplicate values', { ...base, options: [{ value: 'a' }, { value: 'b' }, { value: 'a' }] }, 'options[2].value', 'duplicate'],
    ['an unknown top-level key', { ...base, choices: [] }, 'choices', 'unknown_key'],
    ['multiple that is a string', { ...base, multiple: 'yes' }, 'multiple', 'invalid_type'],
    ['minSelected without multiple', { ...base, minSelected: 2 }, 'minSelected', 'needs_multiple'],
    ['maxSelected without multiple', { ...base, maxSelected: 2 }, 'maxSelected', 'needs_multiple'],
    ['a negative minSelected', { ...base, multiple: true, minSelected: -1 }, 'minSelected', 'too_small'],
    ['a fractional maxSelected', { ...base, multiple: true, maxSelected: 1.5 }, 'maxSelected', 'invalid_type'],
    ['a zero maxSelected', { ...base, multiple: true, maxSelected: 0 }, 'maxSelected', 'too_small'],
    ['min > max', { ...base, multiple: true, minSelected: 3, maxSelected: 2 }, 'minSelected', 'min_exceeds_max'],
    ['minSelected above the option count', { ...base, multiple: true, minSelected: 4 }, 'minSelected', 'too_big'],
    ['maxSelected above the option count', { ...base, multiple: true, maxSelected: 5 }, 'maxSelected', 'too_big'],
    ['a default that is no option', { ...base, default: ['z'] }, 'default[0]', 'not_an_option'],
    ['a repeated default', { ...base, multiple: true, default: ['a', 'a'] }, 'default[1]', 'duplicate'],
    ['two defaults for a single choice', { ...base, default: ['a', 'b'] }, 'default', 'too_many'],
    ['a default that is a string', { ...base, default: 'a' }, 'default', 'invalid_type'],
    ['a via that is no route', { ...base, via: 'email' }, 'via', 'invalid_value'],
    ['a timeoutSeconds that is a string', { ...base, timeoutSeconds: '60' }, 'timeoutSeconds', 'invalid_type'],
    ['a waitSeconds that is a string', { ...base, waitSeconds: 'soon' }, 'waitSeconds', 'invalid_type'],
    ['options nested past the depth limit', { ...base, options: deep }, 'options', 'too_deep'],
  ])('%s', (_name, input, path, rule) => {
    const checked = checkSelectionInput(input);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    const found = checked.issues.find((i) => i.path === path);
    expect(found, JSON.stringify(checked.issues)).toBeDefined();
    expect(found?.rule).toBe(rule);
    if (path) expect(found?.message.startsWith(`${path}: `)).toBe(true);
  });
});

describe('checkSelectionInput normalizes what it accepts', () => {
  it.each([
    ['a single choice', base, { multiple: false, minSelected: 1, maxSelected: 1, default: [], timeoutSeconds: 3600 }, 'auto'],
    ['several, bounds defaulted to 0..count', { ...base, multiple: true }, { multiple: true, minSelected: 0, maxSelected: 3 }, 'auto'],
    ['several with bounds and defaults', { ...base, multiple: true, minSelected: 1, maxSelected: 2, default: ['b', 'c'], via: 'extension' }, { minSelected: 1, maxSelected: 2, default: ['b', 'c'] }, 'extension'],
    ['minSelected 1 on a single choice is allowed', { ...base, minSelected: 1, maxSelected: 1 }, { minSelected: 1, maxSelected: 1 }, 'auto'],
    ['labels and descriptions trimmed', { message: ' Pick ', options: [{ value: ' a ', label: ' A ', description: ' d ' }] }, { message: 'Pick', options: [{ value: ' a ', label: 'A', description: 'd' }] }, 'auto'],
  ])('%s', (_name, input, expected, via) => {
    const checked = checkSelectionInput(input);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.value.ask).toMatchObject({ kind: 'selection', ...expected });
    expect(checked.value.via).toBe(via);
  });
});

const single: SelectionAsk = { kind: 'selection', message: 'm', options, multiple: false, minSelected: 1, maxSelected: 1, default: [], timeoutSeconds: 60 };
const several: SelectionAsk = { ...single, multiple: true, minSelected: 1, maxSelected: 2 };

describe('selectionIssues', () => {
  it.each([
    ['one of the options', single, ['a'], []],
    ['none for a single choice', single, [], ['values.selected:too_few']],
    ['two for a single choice', single, ['a', 'b'], ['values.selected:too_many']],
    ['an unknown value', several, ['a', 'x'], ['values.selected[1]:not_an_option']],
    ['a repeat', several, ['a', 'a'], ['values.selected[1]:duplicate']],
    ['too many', several, ['a', 'b', 'c'], ['values.selected:too_many']],
    ['not a list', several, 'a', ['values.selected:invalid_type']],
    ['a list with a number', several, ['a', 1], ['values.selected:invalid_type']],
  ])('%s', (_name, ask, selected, expected) => {
    expect(selectionIssues(ask, selected).map((i) => `${i.path}:${i.rule}`)).toEqual(expected);
  });
});

describe('checkAskValues', () => {
  const confirm = { kind: 'confirm' as const, message: 'm', labels: { yes: 'Y', no: 'N' }, timeoutSeconds: 60 };
  const form = { kind: 'form' as const, message: 'm', requestedSchema: { type: 'object' as const, properties: { n: { type: 'integer' as const } }, required: ['n'] }, timeoutSeconds: 60 };
  it.each([
    ['confirm yes', confirm, { confirmed: true }, { ok: true, values: { confirmed: true } }],
    ['confirm no', confirm, { confirmed: false }, { ok: true, values: { confirmed: false } }],
    ['confirm extra keys are dropped', confirm, { confirmed: true, note: 'x' }, { ok: true, values: { confirmed: true } }],
    ['confirm null', confirm, { confirmed: null }, { ok: false, issues: [{ path: 'values.confirmed', rule: 'invalid_type' }] }],
    ['confirm not an object', confirm, 'yes', { ok: false, issues: [{ path: 'values', rule: 'not_object' }] }],
    ['form valid', form, { n: 3 }, { ok: true, values: { n: 3 } }],
    ['form missing required', form, {}, { ok: false, issues: [{ path: 'values.n' }] }],
    ['selection valid', several, { selected: ['c'] }, { ok: true, values: { selected: ['c'] } }],
    ['selection empty below the minimum', several, { selected: [] }, { ok: false, issues: [{ path: 'values.selected', rule: 'too_few' }] }],
  ] as const)('%s', (_name, ask, values, expected) => {
    expect(checkAskValues(ask, values)).toMatchObject(expected);
  });
});

describe('askResult: the seed shape of an answer given in the extension', () => {
  const approved = (values: Record<string, unknown>) => ({ decision: 'approved' as const, values, decidedAt: 1, idempotencyKey: 'k' });
  const rejected = { decision: 'rejected' as const, decidedAt: 1, idempotencyKey: 'k' };
  const confirm = { kind: 'confirm' as const, message: 'm', labels: { yes: 'Y', no: 'N' }, timeoutSeconds: 60 };
  const form = { kind: 'form' as const, message: 'm', requestedSchema: { type: 'object' as const, properties: {} }, timeoutSeconds: 60 };
  it.each([
    ['confirm yes', confirm, approved({ confirmed: true }), { confirmed: true, action: 'accept', via: 'extension' }],
    ['confirm no', confirm, approved({ confirmed: false }), { confirmed: false, action: 'accept', via: 'extension' }],
    ['confirm rejected', confirm, rejected, { confirmed: false, action: 'decline', via: 'extension' }],
    ['form accepted', form, approved({ a: 1 }), { action: 'accept', content: { a: 1 }, via: 'extension' }],
    ['form rejected', form, rejected, { action: 'decline', content: null, via: 'extension' }],
    ['selection accepted', several, approved({ selected: ['a', 'b'] }), { action: 'accept', selected: ['a', 'b'], via: 'extension' }],
    ['selection rejected', several, rejected, { action: 'decline', selected: null, via: 'extension' }],
    ['on a team\'s hub, answered on a reviewer\'s phone', confirm, { ...approved({ confirmed: true }), decidedVia: 'phone', decidedBy: 'Ana Pérez' }, { confirmed: true, action: 'accept', via: 'phone', decidedBy: 'Ana Pérez' }],
    ['on a team\'s hub, a form declined by a reviewer', form, { ...rejected, decidedBy: 'Li' }, { action: 'decline', content: null, via: 'extension', decidedBy: 'Li' }],
  ] as const)('%s', (_name, ask, outcome, expected) => {
    expect(askResult(ask, outcome as never)).toEqual(expected);
  });
});

describe('the host dialog of a selection', () => {
  it('single: a titled oneOf, the label as title (else the value), the default when given', () => {
    expect(selectionRequestedSchema({ ...single, default: ['b'] })).toEqual({
      type: 'object',
      properties: { selection: { type: 'string', title: 'Choose one', oneOf: [{ const: 'a', title: 'Alpha' }, { const: 'b', title: 'b' }, { const: 'c', title: 'c' }], default: 'b' } },
      required: ['selection'],
    });
  });
  it('several: an array of anyOf with minItems and maxItems', () => {
    expect(selectionRequestedSchema(several).properties.selection).toEqual({
      type: 'array',
      title: 'Choose',
      items: { anyOf: [{ const: 'a', title: 'Alpha' }, { const: 'b', title: 'b' }, { const: 'c', title: 'c' }] },
      minItems: 1,
      maxItems: 2,
    });
  });
  it.each([
    ['a single value', single, { selection: 'b' }, ['b']],
    ['a single value that is no option', single, { selection: 'z' }, null],
    ['an empty accept (a host approving without a person)', single, {}, null],
    ['several values', several, { selection: ['c', 'a'] }, ['c', 'a']],
    ['too many values', several, { selection: ['a', 'b', 'c'] }, null],
    ['a string where a list belongs', several, { selection: 'a' }, null],
    ['an inherited key is not an answer', single, Object.create({ selection: 'a' }) as Record<string, unknown>, null],
  ])('reads back %s', (_name, ask, content, expected) => {
    expect(selectedFromHost(ask, content)).toEqual(expected);
  });
});

describe("elicit_confirm's two input shapes", () => {
  it.each([
    ['seed names', { question: 'q', yesLabel: 'Sí', noLabel: 'No' }, { ok: true, question: 'q', yes: 'Sí', no: 'No' }],
    ['public names', { message: 'q', labels: { ok: 'Merge', cancel: 'Wait' } }, { ok: true, question: 'q', yes: 'Merge', no: 'Wait' }],
    ['defaults', { message: 'q' }, { ok: true, question: 'q', yes: 'Yes', no: 'No' }],
    ['seed names win when both are given', { question: 'q1', message: 'q2', yesLabel: 'Y', labels: { ok: 'O', cancel: 'C' } }, { ok: true, question: 'q1', yes: 'Y', no: 'No' }],
    ['question with labels is mixing', { question: 'q', labels: { ok: 'O' } }, { ok: false, issues: [{ path: 'labels', rule: 'mixed_shapes' }] }],
    ['message with noLabel is mixing', { message: 'q', noLabel: 'N' }, { ok: false, issues: [{ path: 'noLabel', rule: 'mixed_shapes' }] }],
    ['neither question nor message', { yesLabel: 'Y' }, { ok: false, issues: [{ path: 'question', rule: 'missing' }] }],
  ] as const)('%s', (_name, input, expected) => {
    expect(resolveConfirmInput(input)).toMatchObject(expected);
  });
});
