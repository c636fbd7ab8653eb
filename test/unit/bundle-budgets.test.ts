import { describe, expect, it } from 'vitest';
import { judgeBudgets } from '../../scripts/lib/bundle-size.mjs';

const KB = 1024;
const file = (name: string, gzipKb: number) => ({ file: name, raw: gzipKb * 3 * KB, gzip: gzipKb * KB });

describe('judgeBudgets', () => {
  it('passes a bundle within its budget, and one exactly at it, saying the size against the budget', () => {
    const { ok, lines } = judgeBudgets([
      { name: 'popup (chrome-mv3)', files: [file('chunks/a.js', 40), file('assets/a.css', 2)], budget: 60 * KB },
      { name: 'popup (firefox-mv2)', files: [file('chunks/a.js', 60)], budget: 60 * KB },
    ]);
    expect(ok).toBe(true);
    expect(lines).toEqual([
      'ok: popup (chrome-mv3) 42.0 KB gzip -9, budget 60.0 KB (2 files, 126.0 KB raw)',
      'ok: popup (firefox-mv2) 60.0 KB gzip -9, budget 60.0 KB (1 file, 180.0 KB raw)',
    ]);
  });

  it('fails past the budget by one byte, naming the bundle, the size, the budget, the excess and its largest files', () => {
    const files = [file('small.js', 1), file('big.js', 30), { file: 'edge.js', raw: 10, gzip: 29 * KB + 1 }];
    const { ok, lines } = judgeBudgets([
      { name: 'app (dist/app/review.html)', files: [file('review.html', 96.7)], budget: 60 * KB },
      { name: 'popup (chrome-mv3)', files, budget: 60 * KB },
    ]);
    expect(ok).toBe(false);
    expect(lines[0]).toBe('OVER BUDGET: app (dist/app/review.html) 96.7 KB gzip -9, budget 60.0 KB: 36.7 KB over (1 file, 290.1 KB raw; largest: review.html 96.7 KB)');
    expect(lines[1]).toMatch(/^OVER BUDGET: popup \(chrome-mv3\) 60\.0 KB gzip -9, budget 60\.0 KB: 1 B over .*largest: big\.js 30\.0 KB, edge\.js 29\.0 KB, small\.js 1\.0 KB\)$/);
  });

  it('judges every bundle: one over fails the whole check, the others still say theirs', () => {
    const { ok, lines } = judgeBudgets([
      { name: 'a', files: [file('a.js', 10)], budget: 60 * KB },
      { name: 'b', files: [file('b.js', 61)], budget: 60 * KB },
    ]);
    expect(ok).toBe(false);
    expect(lines.map((l) => l.split(':')[0])).toEqual(['ok', 'OVER BUDGET']);
  });
});
