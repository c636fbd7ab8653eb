import type { CallToolResult } from '@modelcontextprotocol/server';
import { APP_META_KEY, REVIEW_APP_URI } from '../../../shared/app-capability.js';
import type { Session } from '../session.js';

/** A tool whose result the review inside the chat can render: declared only to hosts that render apps. */
export function appToolMeta(session: Session, visibility?: 'app'): { _meta?: Record<string, unknown> } {
  if (!session.app) return {};
  // The flat key is what hosts built on the first drafts read; the nested one is the 2026-01-26 spec's.
  return { _meta: { ui: { resourceUri: REVIEW_APP_URI, ...(visibility ? { visibility: [visibility] } : {}) }, 'ui/resourceUri': REVIEW_APP_URI } };
}

/**
 * Hands the rendered view its request and a fresh single-use key, in the result's `_meta`: never in `content` or
 * `structuredContent`, which the model reads.
 */
export function withAppKey(result: CallToolResult, session: Session, elicitationId: unknown): CallToolResult {
  if (!session.app || result.isError || typeof elicitationId !== 'string') return result;
  return { ...result, _meta: { ...result._meta, [APP_META_KEY]: { elicitationId, token: session.app.keys.mint(elicitationId) } } };
}
