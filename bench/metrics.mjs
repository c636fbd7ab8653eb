// The numbers a bench run is judged on: each part records its headline measures here, and run.mjs prints them side by
// side with the previous run's (bench/baseline.json, rewritten by every full run) and a bare `node -e ''`.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** @type {Map<string, { label: string, value: number, unit: string, goal?: number, better: 'lower' | 'higher' }>} */
const measured = new Map();

/**
 * Records one headline number. `goal` is the bound (≤ for `better: 'lower'`, ≥ for `'higher'`); a NaN value
 * (not measured) is kept and shown as such.
 */
export function record(key, label, value, unit, goal, better = 'lower') {
  measured.set(key, { label, value, unit, goal, better });
}

const fmt = (value, unit) => (Number.isFinite(value) ? `${value >= 1000 ? Math.round(value).toLocaleString('en') : value.toFixed(1)} ${unit}` : '—');

function verdict({ value, goal, better }) {
  if (goal === undefined) return '';
  if (!Number.isFinite(value)) return 'no data';
  return (better === 'lower' ? value <= goal : value >= goal) ? 'met' : 'MISSED';
}

function change(now, before) {
  if (!Number.isFinite(now) || !Number.isFinite(before) || before === 0) return '';
  const pct = ((now - before) / before) * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(0)} %`;
}

/** Prints the summary table and, when `save`, writes this run's numbers as the next run's baseline. */
export function report(baselineFile, { save, commit }) {
  let previous = {};
  let previousAt = '';
  if (existsSync(baselineFile)) {
    const saved = JSON.parse(readFileSync(baselineFile, 'utf8'));
    previous = saved.metrics ?? {};
    previousAt = `${saved.at} (${saved.commit ?? 'unknown commit'}, node ${saved.node})`;
  }
  const rows = [['measure', 'now', 'previous run', 'change', 'goal', 'verdict']];
  for (const [key, m] of measured) {
    const goal = m.goal === undefined ? '' : `${m.better === 'lower' ? '≤' : '≥'} ${fmt(m.goal, m.unit)}`;
    rows.push([m.label, fmt(m.value, m.unit), fmt(previous[key]?.value ?? Number.NaN, m.unit), change(m.value, previous[key]?.value), goal, verdict(m)]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log(`\nsummary (previous run: ${previousAt || 'none saved'})`);
  for (const [i, r] of rows.entries()) {
    console.log(r.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join('  ').trimEnd());
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  if (save) {
    const metrics = Object.fromEntries([...measured].map(([key, m]) => [key, { label: m.label, value: Number.isFinite(m.value) ? Number(m.value.toFixed(2)) : null, unit: m.unit }]));
    writeFileSync(baselineFile, `${JSON.stringify({ at: new Date().toISOString(), commit, node: process.version, cpus: cpus().length, metrics }, null, 2)}\n`);
    console.log(`saved as the next run's baseline: ${baselineFile}`);
  }
  return [...measured.values()].filter((m) => verdict(m) === 'MISSED').length;
}
