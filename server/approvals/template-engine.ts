import type { Context, Emitter, Template } from 'liquidjs';
import { Liquid, ParseError, TokenizationError, toValue } from 'liquidjs';
import { TEMPLATE_LIMITS, refused, type RenderResult, type TemplateRefusalCode } from './template-limits.js';

/**
 * A `displayTemplate` is a pure text transform of the agent's own `context`, whose values it escapes as HTML: no tag that reads a file exists in this
 * engine (no path, relative or absolute, can reach one), and every render is bounded in time, memory, output and block
 * renders (each loop iteration is one). The rendered text is stored and shown as data; the extension sanitizes it.
 * This module runs inside the render worker (render-worker.ts): a filter that overruns the time limit within one step
 * blocks only that thread, which is terminated.
 */

/**
 * Filters that evaluate a Liquid expression per item: one `find_exp` over a four-million-item range is a single node to
 * LiquidJS's time check and ran for 10 s. Nothing a review banner shows needs them (`where`, `find`, `map` remain).
 */
export const REFUSED_FILTERS = ['where_exp', 'reject_exp', 'group_by_exp', 'has_exp', 'find_exp', 'find_index_exp'] as const;

class TemplateLimitError extends Error {
  constructor(
    readonly code: TemplateRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** LiquidJS's own text conversion of an output value (strings as they are, nil empty, arrays joined). */
function toText(value: unknown): string {
  const plain: unknown = toValue(value);
  if (typeof plain === 'string') return plain;
  if (plain === null || plain === undefined) return '';
  if (Array.isArray(plain)) return plain.map(toText).join('');
  return String(plain);
}

/** Refuses to grow past the limit, so a 200-byte template cannot build 16 MB before anyone measures it. */
class BoundedEmitter implements Emitter {
  buffer = '';
  write(html: unknown): void {
    this.buffer += toText(html);
    // Characters first (cheap); a UTF-8 character is at most 4 bytes, so the exact count is needed only near the edge.
    if (this.buffer.length * 4 > TEMPLATE_LIMITS.outputBytes && Buffer.byteLength(this.buffer) > TEMPLATE_LIMITS.outputBytes) {
      throw new TemplateLimitError('too_large', `renders to more than ${TEMPLATE_LIMITS.outputBytes} bytes, the limit for a display template`);
    }
  }
}

function createEngine(): Liquid {
  const liquid = new Liquid({
    // An empty in-memory file system: even a tag that looked a file up would find nothing.
    templates: {},
    // Every {{ value }} is HTML-escaped, so text from `context` shows literally ("John <john@x.com>", "<script>") while
    // the formatting the template itself writes stays markup (for the extension's tag allowlist to keep or drop).
    outputEscape: 'escape',
    ownPropertyOnly: true,
    strictFilters: true,
    parseLimit: TEMPLATE_LIMITS.parseBytes,
    renderLimit: TEMPLATE_LIMITS.renderMs,
    memoryLimit: TEMPLATE_LIMITS.memoryBytes,
  });
  for (const tag of ['include', 'render', 'layout', 'block']) Reflect.deleteProperty(liquid.tags, tag);
  // With strictFilters, a template naming one of these fails to parse: refused before anything runs.
  for (const filter of REFUSED_FILTERS) Reflect.deleteProperty(liquid.filters, filter);

  // Every block render (the body of each loop iteration, each branch, each capture) passes here: count them per render,
  // and give every top-level and capture buffer the output bound.
  const renderer = liquid.renderer;
  const renderTemplates = renderer.renderTemplates.bind(renderer);
  const blocks = new WeakMap<Context, number>();
  renderer.renderTemplates = function* (templates: Template[], ctx: Context, emitter?: Emitter) {
    const count = (blocks.get(ctx) ?? 0) + 1;
    blocks.set(ctx, count);
    if (count > TEMPLATE_LIMITS.blockRenders) throw new TemplateLimitError('too_many_blocks', `renders more than ${TEMPLATE_LIMITS.blockRenders} blocks (loop iterations included), the limit for a display template`);
    return yield* renderTemplates(templates, ctx, emitter ?? new BoundedEmitter());
  };
  return liquid;
}

const engine = createEngine();

function position(message: string): string {
  const at = /line:(\d+), col:(\d+)/.exec(message);
  return at ? ` at line ${at[1]}, column ${at[2]}` : '';
}

/**
 * Why a template was refused, without echoing anything it produced: parse errors name the template's own text (the
 * agent's input); render errors name only where, and which limit when one was hit.
 */
function describe(error: unknown): RenderResult {
  if (error instanceof ParseError || error instanceof TokenizationError) {
    const filter = /undefined filter: (\w+)/.exec(error.message)?.[1];
    if (filter !== undefined && REFUSED_FILTERS.some((f) => f === filter)) {
      return refused('filter_refused', `it uses the filter ${filter}, which display templates do not allow (it evaluates an expression per item, unbounded in time); use where, find or map`);
    }
    return refused('syntax', `it does not parse: ${error.message.split('\n')[0] ?? ''}`);
  }
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    if (cause instanceof TemplateLimitError) return refused(cause.code, `it ${cause.message}`);
    cause = 'originalError' in cause ? cause.originalError : cause.cause;
  }
  const message = error instanceof Error ? error.message : '';
  if (/render limit/i.test(message)) return refused('too_slow', `it renders longer than ${TEMPLATE_LIMITS.renderMs} ms, the limit for a display template`);
  if (/memory alloc limit/i.test(message)) return refused('too_much_memory', `it allocates more than ${TEMPLATE_LIMITS.memoryBytes} bytes, the limit for a display template`);
  return refused('render_failed', `it failed while rendering${position(message)}`);
}

/** Renders on the calling thread: only the render worker calls this (the server calls `renderTemplate`). */
export async function renderInProcess(template: string, context: unknown): Promise<RenderResult> {
  try {
    const html = toText(await engine.parseAndRender(template, { context: context ?? null }));
    if (Buffer.byteLength(html) > TEMPLATE_LIMITS.outputBytes) return refused('too_large', `it renders to more than ${TEMPLATE_LIMITS.outputBytes} bytes, the limit for a display template`);
    return { ok: true, html };
  } catch (error) {
    return describe(error);
  }
}
