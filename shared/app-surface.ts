// The review inside the chat (MCP App, `io.modelcontextprotocol/ui`): what is declared to hosts that render apps, and
// the app-only tools' shapes, defined once for the server that answers them and the view that calls them.
import * as z from 'zod';
import { DecidedViaSchema, SurfaceSchema } from './lifecycle.js';
import { RequestViewSchema } from './review-request.js';
import { issue, type FieldIssue } from './field-issues.js';
import { DecideParamsSchema, DecisionAnswerSchema, ElicitationIdSchema } from './wire-fields.js';

export { APP_META_KEY, APP_MIME_TYPE, REVIEW_APP_URI, UI_EXTENSION, declaresAppUi } from './app-capability.js';

/**
 * `surfaces` as a creating tool takes it: default both; no repeats; the extension is required, since an app view
 * lasts only as long as the chat shows it and the extension is where every request can still be decided.
 */
export function checkSurfaces(surfaces: unknown): { ok: true; app: boolean } | { ok: false; issues: FieldIssue[] } {
  if (surfaces === undefined) return { ok: true, app: true };
  const parsed = z.array(SurfaceSchema).min(1).max(2).safeParse(surfaces);
  if (!parsed.success) return { ok: false, issues: [issue(['surfaces'], 'enum', 'must be a non-empty list of "extension" and "app"')] };
  if (new Set(parsed.data).size !== parsed.data.length) return { ok: false, issues: [issue(['surfaces'], 'uniqueItems', 'must not repeat a surface')] };
  if (!parsed.data.includes('extension')) {
    return { ok: false, issues: [issue(['surfaces'], 'contains', 'must include "extension": the browser extension is where every request can be decided; "app" only adds the chat')] };
  }
  return { ok: true, app: parsed.data.includes('app') };
}

export const AppKeySchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the key the review was given');
export const AppResultMetaSchema = z.strictObject({ elicitationId: ElicitationIdSchema, token: AppKeySchema });

/** Who decided and when: a person in the extension or the chat, or (a confirm question) one of their rules at creation. */
export const DecidedSchema = z.strictObject({ via: DecidedViaSchema, at: z.number() }).nullable();

export const AppViewInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });
export const AppViewResultSchema = z.strictObject({ view: RequestViewSchema, decided: DecidedSchema });
export type AppViewResult = z.infer<typeof AppViewResultSchema>;

// `token` is checked by the server itself (so its refusal names the field); the schema only needs a string.
export const AppDecideInputSchema = DecideParamsSchema.extend({ token: z.string().max(200).optional() });
export type AppDecideInput = z.infer<typeof AppDecideInputSchema>;
export const AppDecideResultSchema = DecisionAnswerSchema.extend({ decided: DecidedSchema.optional() });
export type AppDecideResult = z.infer<typeof AppDecideResultSchema>;

export const AppErrorCodeSchema = z.enum(['token_missing', 'token_invalid', 'token_spent', 'not_found', 'not_in_app', 'unavailable']);
export const AppErrorSchema = z.strictObject({ error: z.strictObject({ code: AppErrorCodeSchema, field: z.string(), message: z.string() }) });
export type AppError = z.infer<typeof AppErrorSchema>;
