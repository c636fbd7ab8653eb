// `npm run docs:roles`: writes the role × method table into docs/security.md from shared/peer-calls.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { withRoleTable } from './lib/role-table.js';

const path = new URL('../docs/security.md', import.meta.url);
const next = withRoleTable(readFileSync(path, 'utf8'));
if (next === null) {
  process.stderr.write('docs/security.md has no role-table markers\n');
  process.exit(1);
}
writeFileSync(path, next);
process.stderr.write('docs/security.md: role × method table written\n');
