import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_LIMITS, renderTemplate } from '../../server/approvals/render-template.js';

// Files a hostile template would like to read: one relative to the working directory, one by absolute path.
const MARKER = 'SECRET-FILE-CONTENT-7f3a';
let dir: string;
let cwd: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-template-'));
  writeFileSync(join(dir, 'notes.txt'), MARKER);
  writeFileSync(join(dir, 'notes.liquid'), MARKER);
  cwd = process.cwd();
  process.chdir(dir);
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

describe('a display template reads no file, by any tag or path', () => {
  const absolute = () => join(dir, 'notes.txt');
  it.each([
    ["{% include 'notes.txt' %}"],
    ["{% include 'notes' %}"],
    ["{% render 'notes.txt' %}"],
    ["{% layout 'notes.txt' %}x"],
    ['{% include "/ABS" %}'],
    ['{% render "/ABS" %}'],
    ["{% include '../' | append: 'notes.txt' %}"],
    ['{% include context.file %}'],
    ["{% capture c %}notes.txt{% endcapture %}{% include c %}"],
    ["{% capture c %}{% include 'notes.txt' %}{% endcapture %}{% include c %}"],
    ["{% block b %}{% include 'notes.txt' %}{% endblock %}"],
    ["{% liquid include 'notes.txt' %}"],
  ])('%s is refused, and the refusal echoes no file', async (template) => {
    const result = await renderTemplate(template.replace('/ABS', absolute()), { file: absolute() });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(MARKER);
  });

  it('the same text without file tags renders normally (control)', async () => {
    expect(await renderTemplate('Hello {{ context.name | upcase }}: {{ context.n | plus: 1 }}', { name: 'Ada', n: 41 })).toEqual({ ok: true, html: 'Hello ADA: 42' });
  });
});

describe('a display template is bounded', () => {
  it(`renders at most ${TEMPLATE_LIMITS.outputBytes} bytes: a 200-byte template cannot grow to megabytes`, async () => {
    const template = "{% for a in (1..400) %}{% for b in (1..400) %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}{% endfor %}";
    expect(template.length).toBeLessThan(200);
    expect(await renderTemplate(template, null)).toEqual({ ok: false, code: 'too_large', error: `it renders to more than ${TEMPLATE_LIMITS.outputBytes} bytes, the limit for a display template` });
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const justOver = '€'.repeat(Math.floor(TEMPLATE_LIMITS.outputBytes / 3) + 1);
    expect((await renderTemplate('{{ context }}', justOver)).ok).toBe(false);
    const under = '€'.repeat(Math.floor(TEMPLATE_LIMITS.outputBytes / 3) - 1);
    expect(await renderTemplate('{{ context }}', under)).toEqual({ ok: true, html: under });
  });

  it('a capture that doubles itself stops at the same bound', async () => {
    const result = await renderTemplate("{% assign s = 'x' %}{% for a in (1..40) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s | size }}", null);
    expect(result).toEqual({ ok: false, code: 'too_large', error: `it renders to more than ${TEMPLATE_LIMITS.outputBytes} bytes, the limit for a display template` });
  });

  it(`runs at most ${TEMPLATE_LIMITS.blockRenders} loop iterations, even when they print nothing`, async () => {
    expect(await renderTemplate('{% for a in (1..100000) %}{% endfor %}done', null)).toEqual({
      ok: false,
      code: 'too_many_blocks',
      error: `it renders more than ${TEMPLATE_LIMITS.blockRenders} blocks (loop iterations included), the limit for a display template`,
    });
    expect((await renderTemplate('{% for a in (1..1000) %}.{% endfor %}', null)).ok).toBe(true);
  });

  it('a range too big to allocate is refused, not a crash of the hub (plain LiquidJS aborts the process on this one)', async () => {
    expect(await renderTemplate('{% assign x = (1..1000000000000) %}{{ x }}', null)).toEqual({
      ok: false,
      code: 'too_much_memory',
      error: `it allocates more than ${TEMPLATE_LIMITS.memoryBytes} bytes, the limit for a display template`,
    });
  });

  it('a refusal never echoes what the template had produced before it', async () => {
    const result = await renderTemplate(`{% capture c %}{{ '${MARKER}' }}{% endcapture %}{{ c }}{% for i in (1..100000000) %}{{ c }}{% endfor %}`, null);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(MARKER);
  });
});

describe('values from context are escaped; the template’s own formatting stays', () => {
  it.each([
    ['John <john@x.com>', 'John &lt;john@x.com&gt;'],
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['Tom & "Jerry"', 'Tom &amp; &#34;Jerry&#34;'],
  ])('%s', async (name, escaped) => {
    expect(await renderTemplate('<b>To:</b> {{ context.name }}', { name })).toEqual({ ok: true, html: `<b>To:</b> ${escaped}` });
  });

  it('escapes filter results too', async () => {
    expect(await renderTemplate('{{ context.name | upcase }}', { name: '<i>x</i>' })).toEqual({ ok: true, html: '&lt;I&gt;X&lt;/I&gt;' });
  });
});

/** Runs `work` while a 10 ms interval counts its ticks: a blocked event loop shows as (almost) none. */
async function whileTicking<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  try {
    const value = await work();
    return { value, ms: performance.now() - started, ticks };
  } finally {
    clearInterval(timer);
  }
}

describe('a template never holds the event loop (it renders in a worker, terminated at the limit)', () => {
  // The first render starts the worker; its start-up is not the template's time.
  beforeAll(async () => {
    expect(await renderTemplate('warm', null)).toEqual({ ok: true, html: 'warm' });
  });

  it('finding 6: find_exp over a four-million-item range is refused up front, by name, while the loop keeps ticking', async () => {
    const { value, ms, ticks } = await whileTicking(() => renderTemplate('{% assign r = (1..4000000) %}{{ r | find_exp: "x", "x == -1" }}', null));
    expect(value).toMatchObject({ ok: false, code: 'filter_refused' });
    expect(ms).toBeLessThan(TEMPLATE_LIMITS.killMs + 1000);
    // At least a quarter of the ticks the elapsed time allows (before the fix: 10.8 s with none at all).
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(ms / 10 / 4));
  });

  it.each(['where_exp', 'reject_exp', 'group_by_exp', 'has_exp', 'find_exp', 'find_index_exp'])('finding 6: %s is refused as filter_refused', async (filter) => {
    expect(await renderTemplate(`{{ context | ${filter}: "x", "x == 1" }}`, [1, 2])).toMatchObject({ ok: false, code: 'filter_refused' });
  });

  it('finding 6: one filter that runs past the limit (a sort of two million items) is killed at the limit; the loop keeps ticking', async () => {
    const { value, ms, ticks } = await whileTicking(() => renderTemplate('{% assign r = (1..2090000) %}{{ r | sort: "x" | first }}', null));
    expect(value).toEqual({ ok: false, code: 'too_slow', error: `it renders longer than ${TEMPLATE_LIMITS.renderMs} ms, the limit for a display template` });
    expect(ms).toBeLessThan(TEMPLATE_LIMITS.killMs + 1000);
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(ms / 10 / 4));
    // A fresh worker takes the next template.
    expect(await renderTemplate('{{ context.n | plus: 1 }}', { n: 1 })).toEqual({ ok: true, html: '2' });
  });

  it('finding 6: renders run one at a time behind a bounded queue; past it, busy', async () => {
    const results = await Promise.all(Array.from({ length: TEMPLATE_LIMITS.queued + 5 }, (_, i) => renderTemplate('{{ context }}', i)));
    const busy = results.filter((r) => !r.ok && r.code === 'busy').length;
    expect(busy).toBeGreaterThan(0);
    expect(results.filter((r) => r.ok).length).toBe(results.length - busy);
    expect(await renderTemplate('{{ context }}', 'after')).toEqual({ ok: true, html: 'after' });
  });
});
