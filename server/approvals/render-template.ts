import { Liquid } from 'liquidjs';
import { clipReason } from '../../shared/limits.js';

// Limits keep a hostile template from spinning the hub; the output is plain text the extension sanitizes.
const engine = new Liquid({ ownPropertyOnly: true, strictFilters: true, parseLimit: 64 * 1024, renderLimit: 1000, memoryLimit: 4 * 1024 * 1024 });

export async function renderTemplate(template: string, context: unknown): Promise<{ ok: true; html: string } | { ok: false; error: string }> {
  try {
    const html = String(await engine.parseAndRender(template, { context: context ?? null }));
    return { ok: true, html };
  } catch (error) {
    return { ok: false, error: clipReason(String((error as Error).message ?? error)) };
  }
}
