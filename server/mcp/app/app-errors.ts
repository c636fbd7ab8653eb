import type { CallToolResult } from '@modelcontextprotocol/server';
import type { AppError } from '../../../shared/app-surface.js';
import { structured } from '../tool-result.js';

/** An app-only tool's refusal: a code, the field it is about, and what happened, for the view to show the person. */
export function appError(code: AppError['error']['code'], field: string, message: string): CallToolResult {
  return structured({ error: { code, field, message } } satisfies AppError, true);
}
