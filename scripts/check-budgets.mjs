// Fails the build past a size budget (gzip -9), printing each measured size against its budget either way:
//   node scripts/check-budgets.mjs popup   the popup of both built extensions (.output/chrome-mv3, .output/firefox-mv2)
//   node scripts/check-budgets.mjs app     the review inside the chat (dist/app/review.html)
// ELICITLY_EXTENSION_OUT moves the extensions' builds, as it does for wxt.config.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUDGETS, fileBundle, judgeBudgets, popupBundle } from './lib/bundle-size.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXTENSIONS = process.env.ELICITLY_EXTENSION_OUT || join(ROOT, '.output');

const TARGETS = {
  popup: () => ['chrome-mv3', 'firefox-mv2'].map((build) => ({
    name: `popup (${build})`,
    page: join(EXTENSIONS, build, 'popup.html'),
    measure: () => popupBundle(join(EXTENSIONS, build)),
    budget: BUDGETS.popup,
    how: 'npm run build:extension',
  })),
  app: () => [{
    name: 'app (dist/app/review.html)',
    page: join(ROOT, 'dist/app/review.html'),
    measure: () => fileBundle(join(ROOT, 'dist/app'), 'review.html'),
    budget: BUDGETS.app,
    how: 'node scripts/build-app.mjs',
  }],
};

const target = process.argv[2];
if (!Object.hasOwn(TARGETS, target ?? '')) {
  console.error(`check-budgets: name a target: ${Object.keys(TARGETS).join(' or ')} (got ${target ?? 'none'})`);
  process.exit(2);
}
const checks = TARGETS[target]();
const missing = checks.filter((c) => !existsSync(c.page));
if (missing.length) {
  for (const c of missing) console.error(`check-budgets: ${c.page} is missing; build it first: ${c.how}`);
  process.exit(1);
}
const { ok, lines } = judgeBudgets(checks.map((c) => ({ name: c.name, files: c.measure(), budget: c.budget })));
// stderr either way, like the builds' own logs: `npm pack --json` runs the build in `prepare`, and its stdout is the JSON.
for (const line of lines) console.error(`check-budgets: ${line}`);
if (!ok) process.exit(1);
