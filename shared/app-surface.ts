// The review inside the chat (MCP App, `io.modelcontextprotocol/ui`): what is declared to hosts that render apps, and
// the app-only tools' shapes, defined once for the server that answers them and the view that calls them.
import * as z from 'zod';
import { DecidedViaSchema, StatusSchema, SurfaceSchema } from './lifecycle.js';
import { RequestViewSchema } from './review-request.js';
import { FieldIssueSchema, issue, type FieldIssue } from './field-issues.js';
import { DecideParamsSchema, DecisionRefusalSchema, ElicitationIdSchema } from './wire-fields.js';

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
const DecidedAtSchema = z.strictObject({ via: DecidedViaSchema, at: z.number() });
export const DecidedSchema = DecidedAtSchema.nullable();

export const AppViewInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });
export const AppViewResultSchema = z.strictObject({ view: RequestViewSchema, decided: DecidedSchema });
export type AppViewResult = z.infer<typeof AppViewResultSchema>;

// `token` is checked by the server itself (so its refusal names the field); the schema only needs a string. `rule` is
// not offered: rules are the person's, saved only from the extension's own socket, and the hub refuses one from here.
export const AppDecideInputSchema = DecideParamsSchema.omit({ rule: true }).extend({ token: z.string().max(200).optional() });
export type AppDecideInput = z.infer<typeof AppDecideInputSchema>;
/** A decision taken; every refusal is an `isError` result (`AppErrorSchema`). */
export const AppDecideResultSchema = z.strictObject({ ok: z.literal(true), status: StatusSchema });
export type AppDecideResult = z.infer<typeof AppDecideResultSchema>;

/** The key's problems: the review cannot decide with the key it holds (only when the request is still pending). */
export const AppKeyProblemSchema = z.enum(['token_missing', 'token_invalid', 'token_spent']);
export const AppErrorCodeSchema = z.enum([...AppKeyProblemSchema.options, 'not_in_app', 'unavailable', ...DecisionRefusalSchema.options]);
export type AppErrorCode = z.infer<typeof AppErrorCodeSchema>;
/**
 * An app-only tool's refusal: the code, the field it is about, a message naming the rule. A decision refused with
 * `invalid` lists the issues per field (the review marks them); one refused because the request was decided says by
 * whom and when (`decided`).
 */
export const AppErrorSchema = z.strictObject({
  error: z.strictObject({ code: AppErrorCodeSchema, field: z.string(), message: z.string() }),
  issues: z.array(FieldIssueSchema).optional(),
  decided: DecidedAtSchema.optional(),
});
export type AppError = z.infer<typeof AppErrorSchema>;
