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

/** A refusal a model can act on: what was wrong, and what to do instead. */
export function refusal(code: ToolErrorCode, message: string, hint: string, issues?: FieldIssue[]): CallToolResult {
  const body = { error: code, message, hint, ...(issues ? { issues } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

export function invalidArguments(issues: FieldIssue[], hint: string): CallToolResult {
  return refusal('invalid_arguments', formatIssues(issues), hint, issues);
}
