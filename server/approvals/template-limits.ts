import * as z from 'zod';

/**
 * What a `displayTemplate` may cost, shared by the renderer (which runs in a worker thread) and the thread that waits
 * for it. Kept apart from LiquidJS so that waiting for a render never loads the engine on the caller's thread.
 */
export const TEMPLATE_LIMITS = {
  /** UTF-8 bytes of the rendered text, and of any `capture` on the way. */
  outputBytes: 64 * 1024,
  /** Template blocks rendered per call: every loop iteration, branch and capture counts. */
  blockRenders: 10_000,
  renderMs: 1000,
  /**
   * When the worker is terminated. LiquidJS checks `renderMs` only between template nodes, so one filter over a large
   * array (a sort of two million items) runs on regardless; the grace lets its own check answer first when it can, so a
   * worker is replaced only when a single step overran.
   */
  killMs: 1250,
  memoryBytes: 4 * 1024 * 1024,
  parseBytes: 64 * 1024,
  /** Renders waiting behind the one in progress; one more is refused as `busy` rather than queued without end. */
  queued: 16,
} as const;

/** Why a template was refused, by name: the tools report it as the `rule` of the `displayTemplate` issue. */
export const TemplateRefusalCodeSchema = z.enum(['syntax', 'filter_refused', 'too_large', 'too_many_blocks', 'too_slow', 'too_much_memory', 'render_failed', 'busy']);
export type TemplateRefusalCode = z.infer<typeof TemplateRefusalCodeSchema>;

export const RenderResultSchema = z.union([
  z.strictObject({ ok: z.literal(true), html: z.string() }),
  z.strictObject({ ok: z.literal(false), code: TemplateRefusalCodeSchema, error: z.string() }),
]);
export type RenderResult = z.infer<typeof RenderResultSchema>;

export function refused(code: TemplateRefusalCode, error: string): RenderResult {
  return { ok: false, code, error };
}
