import { describe, it, expect } from 'vitest';
import { checkDecisionValues, checkProposalInput, type ProposalRequest } from '../../shared/approval-input.js';
import {
  acceptAll,
  defaultIncluded,
  includedCount,
  initialRows,
  isEmptyValue,
  rejectAll,
  requiredLocked,
  restoreCurrent,
  restoreProposed,
  resumeRows,
  sourceDiffers,
  submission,
  useSource,
  valuesEqual,
  type GridRow,
} from '../../shared/proposal-grid.js';
import { northmarkProposal } from '../fixtures/northmark.js';

function request(input: unknown): ProposalRequest {
  const r = checkProposalInput(input);
  if (!r.ok) throw new Error(r.issues.map((i) => i.message).join('; '));
  return r.request;
}
const northmark = request(northmarkProposal);

// An update: Salesforce already holds some values, so defaults decide inclusion.
const update = request({
  message: 'Update Acme',
  columns: { sources: [{ key: 'apollo', label: 'Apollo' }, { key: 'zoominfo', label: 'ZoomInfo' }], current: { label: 'Salesforce' } },
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name', default: 'Acme' },
      phone: { type: 'string', default: '+1 555 0100' },
      employees: { type: 'integer', title: 'Employees', default: 120 },
      tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, default: ['b', 'a'] },
      notes: { type: 'string', title: 'Notes' },
      industry: { type: 'string', title: 'Industry', default: 'Retail' },
    },
    required: ['name', 'phone'],
  },
  fields: {
    name: { sources: { apollo: 'Acme', zoominfo: 'ACME Corp' }, current: 'Acme' },
    phone: { sources: { apollo: '+1 555 0100' }, current: '' },
    employees: { sources: { apollo: 100, zoominfo: 120 }, current: 100, include: false },
    tags: { sources: { apollo: ['a', 'b'] }, current: ['a', 'b'] },
    industry: { current: 'Retail', include: true },
  },
});

describe('isEmptyValue', () => {
  it.each<[unknown, boolean]>([
    [null, true], [undefined, true], ['', true], [[], true],
    [' ', false], [0, false], [false, false], [['a'], false], [{}, false],
  ])('%j → %s', (v, expected) => {
    expect(isEmptyValue(v)).toBe(expected);
  });
});

describe('valuesEqual', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['null and undefined', null, undefined, true],
    ['null and empty string', null, '', true],
    ['empty array and null', [], null, true],
    ['arrays as sets', ['Asset Manager', 'Private Equity'], ['Private Equity', 'Asset Manager'], true],
    ['arrays with different members', ['a', 'b'], ['a', 'c'], false],
    ['arrays of different sizes', ['a'], ['a', 'b'], false],
    ['repeated members as a set', ['a', 'a', 'b'], ['b', 'a'], true],
    ['equal strings', 'x', 'x', true],
    ['strings differing in case', 'Acme', 'ACME', false],
    ['number and numeric string', 230, '230', false],
    ['value and blank', 'x', null, false],
    ['zero and blank', 0, null, false],
    ['false and blank', false, undefined, false],
    ['objects by JSON', { a: 1 }, { a: 1 }, true],
    ['different objects', { a: 1 }, { a: 2 }, false],
    ['array and string', ['a'], 'a', false],
  ])('%s', (_name, a, b, expected) => {
    expect(valuesEqual(a, b)).toBe(expected);
    expect(valuesEqual(b, a)).toBe(expected);
  });
});

describe('sourceDiffers', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['populated source on a create (null current)', 'NorthMark', null, true],
    ['populated source, absent current', 230, undefined, true],
    ['source equal to current', 'Acme', 'Acme', false],
    ['source disagreeing with current', 'ACME Corp', 'Acme', true],
    ['arrays equal as sets', ['b', 'a'], ['a', 'b'], false],
    ['arrays differing', ['a'], ['a', 'b'], true],
    ['array against empty current array', ['a'], [], true],
    ['absent source value', undefined, 'Acme', false],
    ['null source value', null, 'Acme', false],
    ['absent source on a create', undefined, null, false],
    ['empty string source against a value', '', 'Acme', true],
  ])('%s', (_name, source, current, expected) => {
    expect(sourceDiffers(source, current)).toBe(expected);
  });

  it('highlights each source independently', () => {
    const f = update.fields.employees;
    const current = f?.current;
    expect(sourceDiffers(f?.sources.apollo, current)).toBe(false);
    expect(sourceDiffers(f?.sources.zoominfo, current)).toBe(true);
    const n = update.fields.name;
    expect([sourceDiffers(n?.sources.apollo, n?.current), sourceDiffers(n?.sources.zoominfo, n?.current)]).toEqual([false, true]);
  });
});

describe('defaultIncluded and requiredLocked', () => {
  it.each<[string, ProposalRequest, string, boolean, boolean]>([
    ['create: default differs from null current', northmark, 'website', true, false],
    ['create: required with null current', northmark, 'name', true, true],
    ['explicit include on an array field', northmark, 'institutionTypes', true, false],
    ['update: default equals current', update, 'name', false, false],
    ['update: required but current blank string', update, 'phone', true, true],
    ['update: include false overrides a difference', update, 'employees', false, false],
    ['update: arrays equal as sets', update, 'tags', false, false],
    ['proposed-only field without default', update, 'notes', false, false],
    ['include true overrides equality', update, 'industry', true, false],
  ])('%s', (_name, req, key, included, locked) => {
    expect(defaultIncluded(req, key)).toBe(included);
    expect(requiredLocked(req, key)).toBe(locked);
  });

  it('locks only when current is empty', () => {
    const filled = request({ ...northmarkProposal, fields: { name: { current: 'NorthMark' } } });
    expect(requiredLocked(filled, 'name')).toBe(false);
    expect(requiredLocked(northmark, 'name')).toBe(true);
    expect(requiredLocked(request({ ...northmarkProposal, fields: {} }), 'name')).toBe(true);
  });
});

describe('initialRows', () => {
  it('builds the NorthMark grid in property order', () => {
    expect(initialRows(northmark)).toEqual([
      { key: 'name', title: 'Name', proposed: 'NorthMark Strategies', included: true, locked: true },
      { key: 'website', title: 'Website', proposed: 'https://www.northmarkstrategies.com/', included: true, locked: false },
      { key: 'employeeCount', title: 'Number of Employees', proposed: 230, included: true, locked: false },
      { key: 'institutionTypes', title: 'Institution Types', proposed: ['Asset Manager', 'Private Equity'], included: true, locked: false },
    ]);
  });

  it('falls back to the key as title and null as proposed, and keeps locked rows included', () => {
    const rows = initialRows(update);
    expect(rows.map((r) => r.key)).toEqual(['name', 'phone', 'employees', 'tags', 'notes', 'industry']);
    expect(rows.find((r) => r.key === 'phone')).toEqual({ key: 'phone', title: 'phone', proposed: '+1 555 0100', included: true, locked: true });
    expect(rows.find((r) => r.key === 'notes')).toEqual({ key: 'notes', title: 'Notes', proposed: null, included: false, locked: false });
    expect(includedCount(rows)).toEqual({ included: 2, total: 6 });
  });

  it('locked wins over include: false', () => {
    const req = request({ ...northmarkProposal, fields: { name: { current: null, include: false } } });
    expect(initialRows(req)[0]).toMatchObject({ key: 'name', included: true, locked: true });
  });

  it('does not alias the schema default', () => {
    const rows = initialRows(northmark);
    (rows[3]?.proposed as string[]).push('REIT');
    expect(northmark.requestedSchema.properties.institutionTypes?.default).toEqual(['Asset Manager', 'Private Equity']);
  });
});

describe('header actions', () => {
  const rows = initialRows(update);

  it.each<[string, (r: readonly GridRow[]) => GridRow[], number]>([
    ['accept all', acceptAll, 6],
    ['reject all keeps locked rows', rejectAll, 1],
  ])('%s', (_name, action, count) => {
    const next = action(rows);
    expect(includedCount(next)).toEqual({ included: count, total: 6 });
    expect(next.filter((r) => r.locked).every((r) => r.included)).toBe(true);
    expect(includedCount(rows)).toEqual({ included: 2, total: 6 });
  });

  it('restore proposed resets values and keeps inclusion', () => {
    const edited = rows.map((r) => ({ ...r, proposed: 'edited', included: true }));
    const restored = restoreProposed(edited, update);
    expect(restored.map((r) => r.proposed)).toEqual(initialRows(update).map((r) => r.proposed));
    expect(restored.every((r) => r.included)).toBe(true);
    expect(edited.every((r) => r.proposed === 'edited')).toBe(true);
  });
});

describe('double-click', () => {
  const [name, website] = initialRows(northmark) as [GridRow, GridRow];
  const employees = initialRows(update)[2] as GridRow;

  it.each<[string, GridRow, GridRow]>([
    ['a source cell copies it and includes the row', useSource({ ...website, included: false }, 'https://northmark.io/'), { ...website, proposed: 'https://northmark.io/', included: true }],
    ['a second source cell', useSource(name, 'NorthMark Strategies Inc.'), { ...name, proposed: 'NorthMark Strategies Inc.', included: true }],
    ['the current cell copies it and unincludes the row', restoreCurrent({ ...employees, included: true }, 100), { ...employees, proposed: 100, included: false }],
    ['the current cell on a locked row keeps it included', restoreCurrent(name, null), { ...name, proposed: null, included: true }],
  ])('%s', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  it('does not mutate the row', () => {
    const before = structuredClone(website);
    useSource(website, 'x');
    restoreCurrent(website, 'y');
    expect(website).toEqual(before);
  });
});

describe('submission', () => {
  it('carries only included rows', () => {
    const rows = rejectAll(initialRows(northmark)).map((r) => (r.key === 'employeeCount' ? useSource(r, 231) : r));
    expect(submission(rows)).toEqual({ included: ['name', 'employeeCount'], values: { name: 'NorthMark Strategies', employeeCount: 231 } });
  });

  it.each<[string, (r: readonly GridRow[]) => GridRow[]]>([
    ['initial grid', (r) => [...r]],
    ['accept all', acceptAll],
    ['reject all', rejectAll],
  ])('what the grid submits passes checkDecisionValues (%s)', (_name, action) => {
    const { included, values } = submission(action(initialRows(northmark)));
    expect(checkDecisionValues(northmark, values, included)).toEqual({ ok: true, values });
  });

  it('is empty when nothing is included', () => {
    expect(submission(rejectAll(initialRows(update)).map((r) => ({ ...r, included: false })))).toEqual({ included: [], values: {} });
  });
});

describe('resumeRows (a refused attempt reopened)', () => {
  const rows = initialRows(northmark);
  it.each([
    ['takes the attempt values and its choice of rows', { values: { website: 'x', employeeCount: 5 }, included: ['name', 'website'] },
      { name: ['NorthMark Strategies', true], website: ['x', true], employeeCount: [5, false], institutionTypes: [['Asset Manager', 'Private Equity'], false] }],
    ['keeps a locked row included even when the attempt left it out', { values: {}, included: [] },
      { name: ['NorthMark Strategies', true], website: ['https://www.northmarkstrategies.com/', false], employeeCount: [230, false], institutionTypes: [['Asset Manager', 'Private Equity'], false] }],
    ['keeps a cleared value (null) as the person left it', { values: { website: null }, included: ['website'] },
      { name: ['NorthMark Strategies', true], website: [null, true], employeeCount: [230, false], institutionTypes: [['Asset Manager', 'Private Equity'], false] }],
    ['without `included` (an approval-like attempt) keeps the default inclusion', { values: { employeeCount: 7 } },
      { name: ['NorthMark Strategies', true], website: ['https://www.northmarkstrategies.com/', true], employeeCount: [7, true], institutionTypes: [['Asset Manager', 'Private Equity'], true] }],
  ] as const)('%s', (_name, attempt, expected) => {
    const resumed = resumeRows(rows, attempt as { values?: Record<string, unknown>; included?: readonly string[] });
    expect(Object.fromEntries(resumed.map((r) => [r.key, [r.proposed, r.included]]))).toEqual(expected);
  });

  it('does not alias the attempt arrays', () => {
    const attempt = { values: { institutionTypes: ['REIT'] }, included: ['institutionTypes'] };
    const resumed = resumeRows(rows, attempt);
    (resumed.find((r) => r.key === 'institutionTypes')?.proposed as string[]).push('Hedge Fund');
    expect(attempt.values.institutionTypes).toEqual(['REIT']);
  });
});
