import type { CallToolResult } from '@modelcontextprotocol/server';
import type { FieldIssue } from '../../shared/requested-schema.js';
import { formatIssues } from '../../shared/requested-schema.js';

/** Every result carries `structuredContent` and the same JSON as text: some hosts read only one of them. */
export function structured(value: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value,
    ...(isError ? { isError: true } : {}),
  };
}

type ToolErrorCode = 'invalid_arguments' | 'invalid_schema' | 'internal_error';

/**
 * The most issues one refusal lists. Input of a few hundred KB can hold 200,000 faults (say, duplicate defaults); listed
 * in full they made a 21 MB answer, more than a host reads on one line, so the agent saw its connection close instead
 * of the refusal. The first ones name the field and the rule; `moreIssues` says how many were left out.
 */
export const MAX_LISTED_ISSUES = 20;

/** A refusal a model can act on: what was wrong, and what to do instead. */
export function refusal(code: ToolErrorCode, message: string, hint: string, issues?: FieldIssue[]): CallToolResult {
  const listed = issues?.slice(0, MAX_LISTED_ISSUES);
  const more = (issues?.length ?? 0) - (listed?.length ?? 0);
  const body = { error: code, message, hint, ...(listed ? { issues: listed } : {}), ...(more > 0 ? { moreIssues: more } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

export function invalidArguments(issues: FieldIssue[], hint: string): CallToolResult {
  return refusal('invalid_arguments', formatIssues(issues), hint, issues);
}
