import { describe, expect, it } from 'vitest';
import type { ConfirmResult, HostAnswer } from '../../server/mcp/confirm.js';
import { CONFIRM_FIELD, confirmRequestedSchema, mapConfirm } from '../../server/mcp/confirm.js';
import { checkRequestedSchema } from '../../shared/requested-schema.js';

describe('mapConfirm (seed 000 table)', () => {
  const q = 'Ship it?';
  const rows: [string, HostAnswer, ConfirmResult][] = [
    ['accept + yes', { action: 'accept', content: { [CONFIRM_FIELD]: 'yes' } }, { confirmed: true, action: 'accept' }],
    ['accept + no', { action: 'accept', content: { [CONFIRM_FIELD]: 'no' } }, { confirmed: false, action: 'accept' }],
    ['decline', { action: 'decline' }, { confirmed: false, action: 'decline' }],
    ['cancel', { action: 'cancel' }, { confirmed: null, action: 'cancel', question: q }],
    ['error', { action: 'error', error: 'boom' }, { confirmed: null, question: q, error: 'boom' }],
    [
      'accept without a choice is an error, not a guess',
      { action: 'accept', content: {} },
      { confirmed: null, question: q, error: 'the host accepted without choosing an option (got nothing)' },
    ],
  ];
  it.each(rows)('%s', (_name, answer, expected) => {
    expect(mapConfirm(q, answer)).toEqual(expected);
  });
});

describe('confirmRequestedSchema', () => {
  it('is a valid requestedSchema whose options carry the labels', () => {
    const schema = confirmRequestedSchema('Sí', 'No');
    expect(checkRequestedSchema(schema).ok).toBe(true);
    expect(schema.properties[CONFIRM_FIELD]).toMatchObject({ oneOf: [{ const: 'yes', title: 'Sí' }, { const: 'no', title: 'No' }] });
    expect(schema.required).toEqual([CONFIRM_FIELD]);
  });
});
