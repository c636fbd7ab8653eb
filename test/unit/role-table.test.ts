import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderRoleTable } from '../../scripts/lib/role-table.js';
import { CALLERS, PEER_CALLS, PEER_METHODS } from '../../shared/peer-calls.js';

const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');

describe('the role × method table of docs/security.md', () => {
  it('is the one rendered from the call map (run `npm run docs:roles` after changing shared/peer-calls.ts)', () => {
    expect(doc).toContain(renderRoleTable());
  });

  it('has a row for every method, and a column for every caller', () => {
    const table = renderRoleTable();
    for (const method of PEER_METHODS) expect(table).toContain(`| \`${method}\` | ${PEER_CALLS[method].what} |`);
    expect(table.split('\n')[1]?.split('|').length).toBe(CALLERS.length + 4);
  });
});
