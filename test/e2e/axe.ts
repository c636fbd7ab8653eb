// axe-core in a page or frame of the real browsers' e2e: its source is evaluated in the page (Playwright's evaluation
// is not an inline script, so the extension pages' CSP stays as it is), then `axe.run` checks the document as shown.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }

/** What `axe.run` finds with these options (`resultTypes` violations), on the document as shown. */
async function axeRun(target: Page | Frame, options: Record<string, unknown>): Promise<AxeViolation[]> {
  const loaded = await target.evaluate('typeof window.axe === "object"');
  if (!loaded) await target.evaluate(AXE_SOURCE);
  return await target.evaluate(`window.axe.run(document, ${JSON.stringify({ ...options, resultTypes: ['violations'] })}).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.map(String), failureSummary: n.failureSummary })),
  })))`) as AxeViolation[];
}

/** The violations axe finds at impact serious or critical. */
export async function seriousViolations(target: Page | Frame): Promise<AxeViolation[]> {
  return (await axeRun(target, {})).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** The violations of exactly these rules (every impact): a rule axe rates moderate, such as page-has-heading-one, too. */
export function violationsOf(target: Page | Frame, rules: string[]): Promise<AxeViolation[]> {
  return axeRun(target, { runOnly: { type: 'rule', values: rules } });
}

/** The violations as an assertion message that says what failed and where. */
export function describeViolations(where: string, violations: AxeViolation[]): string {
  return `${where}: ${violations.length} axe violations\n${violations.map((v) => `- ${v.id} (${v.impact}): ${v.help}\n${v.nodes.slice(0, 5).map((n) => `    ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\n/g, ' ')}`).join('\n')}`).join('\n')}`;
}
