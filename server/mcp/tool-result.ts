import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { AppError } from '../../shared/app-surface.js';
import type { ServiceErrorCode } from '../../shared/peer-calls.js';
import { FieldIssueSchema, formatIssues, type FieldIssue } from '../../shared/field-issues.js';

/** Every result carries `structuredContent` and the same JSON as text: some hosts read only one of them. */
export function structured(value: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value,
    ...(isError ? { isError: true } : {}),
  };
}

/**
 * The most issues one refusal lists. Input of a few hundred KB can hold 200,000 faults (say, duplicate defaults); listed
 * in full they made a 21 MB answer, more than a host reads on one line, so the agent saw its connection close instead
 * of the refusal. The first ones name the field and the rule; `moreIssues` says how many were left out.
 */
export const MAX_LISTED_ISSUES = 20;

/**
 * Every tool's refusal (`isError`), as `structuredContent` and as text. Part of every tool's outputSchema: a v1 SDK
 * client checks an error result's `structuredContent` against it too, and throws when it does not fit. Loose and
 * `error` a plain string, like every outputSchema here, so new codes do not break a host that cached the tool list.
 */
export const ToolErrorSchema = z.looseObject({
  error: z.string(),
  message: z.string(),
  hint: z.string(),
  issues: z.array(FieldIssueSchema).max(MAX_LISTED_ISSUES).optional(),
  moreIssues: z.number().int().min(1).optional(),
});
export type ToolError = z.infer<typeof ToolErrorSchema>;

export type ToolErrorCode = 'invalid_arguments' | 'internal_error' | ServiceErrorCode;

/** A refusal a model can act on: what was wrong (the issues, formatted, unless a message says it), what to do instead. */
type Refusal = { code: ToolErrorCode; hint: string } & ({ message: string; issues?: FieldIssue[] } | { message?: undefined; issues: FieldIssue[] });

/** An app-only tool's refusal: the view shows the person which field it is about. */
type AppRefusal = { code: AppError['error']['code']; field: string; message: string };

/**
 * Every `isError` result a tool gives: a refusal (`ToolErrorSchema`, with at most MAX_LISTED_ISSUES issues), or, for
 * the app-only tools, the view's `{ error: { code, field, message } }`.
 */
export function toolError(refused: Refusal | AppRefusal): CallToolResult {
  if ('field' in refused) return structured({ error: { code: refused.code, field: refused.field, message: refused.message } } satisfies AppError, true);
  const { code, hint, issues } = refused;
  const message = refused.message !== undefined ? refused.message : formatIssues(refused.issues);
  const listed = issues?.slice(0, MAX_LISTED_ISSUES);
  const more = (issues?.length ?? 0) - (listed?.length ?? 0);
  const body: ToolError = { error: code, message, hint, ...(listed ? { issues: listed } : {}), ...(more > 0 ? { moreIssues: more } : {}) };
  return structured(body, true);
}
