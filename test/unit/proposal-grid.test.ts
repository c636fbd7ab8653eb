import { describe, it, expect } from 'vitest';
import { checkDecisionValues, checkProposalInput, type ProposalRequest } from '../../shared/approval-input.js';
import {
  acceptAll,
  defaultIncluded,
  editProposed,
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
} from '../../kit/core/proposal-grid.js';
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

// Properties without a default, against a record that has values: nothing is proposed for them.
const blanks = request({
  message: 'Update Beta',
  columns: { sources: [{ key: 'apollo', label: 'Apollo' }], current: { label: 'Salesforce' } },
  requestedSchema: {
    type: 'object',
    properties: {
      phone: { type: 'string', title: 'Phone' },
      fax: { type: 'string', title: 'Fax' },
      active: { type: 'boolean', title: 'Active' },
      verified: { type: 'boolean', title: 'Verified' },
      size: { type: 'integer', title: 'Size' },
      region: { type: 'string', title: 'Region' },
      tags: { type: 'array', items: { enum: ['a', 'b'] } },
    },
    required: ['verified', 'size'],
  },
  fields: {
    phone: { sources: { apollo: '+1 555 0199' }, current: '+1 555 0100' },
    active: { current: true },
    region: { current: 'EU', include: true },
    tags: { current: ['a'] },
  },
});

describe('honest defaults: a property without a default proposes nothing', () => {
  it.each<[string, string, unknown, boolean, boolean]>([
    ['a Current value is not cleared by default', 'phone', null, false, false],
    ['nothing on either side', 'fax', null, false, false],
    ['a boolean starts unticked, which is false, and is not included over Current', 'active', false, false, false],
    ['a required boolean with no Current is locked in, sending false', 'verified', false, true, true],
    ['a required field with no Current is locked in, blank for the person to fill', 'size', null, true, true],
    ['an explicit include still wins (seed 004): the agent proposes clearing', 'region', null, true, false],
    ['a multiselect with a Current value', 'tags', null, false, false],
  ])('%s (%s)', (_name, key, proposed, included, locked) => {
    expect(initialRows(blanks).find((r) => r.key === key)).toMatchObject({ proposed, included, locked, chosen: false });
    expect(defaultIncluded(blanks, key)).toBe(included && !locked);
  });

  it('the untouched grid, and Accept All, send no null for a field nobody chose', () => {
    for (const rows of [initialRows(blanks), acceptAll(initialRows(blanks))]) {
      expect(submission(rows)).toEqual({ included: ['verified', 'size', 'region'], values: { verified: false, size: null, region: null } });
    }
  });

  it('the locked blank must be filled before anything is sent; the false boolean passes', () => {
    const { included, values } = submission(initialRows(blanks));
    const checked = checkDecisionValues(blanks, values, included);
    expect(checked.ok ? [] : checked.issues.map((i) => [i.path, i.rule])).toEqual([['values.size', 'required']]);
  });

  it('a person who includes a blank row and clears it sends null on purpose', () => {
    const rows = initialRows(blanks).map((r) => (r.key === 'phone' ? editProposed(r, null) : r));
    expect(submission(rows).values).toHaveProperty('phone', null);
  });
});

describe('initialRows', () => {
  it('builds the NorthMark grid in property order', () => {
    expect(initialRows(northmark)).toEqual([
      { key: 'name', title: 'Name', proposed: 'NorthMark Strategies', included: true, locked: true, chosen: true },
      { key: 'website', title: 'Website', proposed: 'https://www.northmarkstrategies.com/', included: true, locked: false, chosen: true },
      { key: 'employeeCount', title: 'Number of Employees', proposed: 230, included: true, locked: false, chosen: true },
      { key: 'institutionTypes', title: 'Institution Types', proposed: ['Asset Manager', 'Private Equity'], included: true, locked: false, chosen: true },
    ]);
  });

  it('falls back to the key as title and null as proposed, and keeps locked rows included', () => {
    const rows = initialRows(update);
    expect(rows.map((r) => r.key)).toEqual(['name', 'phone', 'employees', 'tags', 'notes', 'industry']);
    expect(rows.find((r) => r.key === 'phone')).toEqual({ key: 'phone', title: 'phone', proposed: '+1 555 0100', included: true, locked: true, chosen: true });
    expect(rows.find((r) => r.key === 'notes')).toEqual({ key: 'notes', title: 'Notes', proposed: null, included: false, locked: false, chosen: false });
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
    // "notes" proposes nothing: including it would send null and clear the record's value.
    ['accept all includes every row that proposes something', acceptAll, 5],
    ['reject all keeps locked rows', rejectAll, 1],
  ])('%s', (_name, action, count) => {
    const next = action(rows);
    expect(includedCount(next)).toEqual({ included: count, total: 6 });
    expect(next.filter((r) => r.locked).every((r) => r.included)).toBe(true);
    expect(includedCount(rows)).toEqual({ included: 2, total: 6 });
  });

  it('restore proposed resets values and keeps inclusion, except a row without default, which proposes nothing again', () => {
    const edited = rows.map((r) => editProposed(r, 'edited'));
    const restored = restoreProposed(edited, update);
    expect(restored.map((r) => r.proposed)).toEqual(initialRows(update).map((r) => r.proposed));
    expect(restored.map((r) => [r.key, r.included, r.chosen])).toEqual([
      ['name', true, true], ['phone', true, true], ['employees', true, true], ['tags', true, true], ['notes', false, false], ['industry', true, true],
    ]);
    expect(edited.every((r) => r.proposed === 'edited')).toBe(true);
  });

  it('accept all after an edit includes the edited blank row: the person chose its value', () => {
    const notes = rows.findIndex((r) => r.key === 'notes');
    const next = acceptAll(rows.map((r, i) => (i === notes ? editProposed({ ...r, included: false }, 'call back') : r)));
    expect(next[notes]).toMatchObject({ proposed: 'call back', included: true, chosen: true });
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
