import type { QuestionRow } from '../../shared/rule-history.js';
import type { ElicitlyDb } from './database.js';
import { prefixRange } from './request-ranges.js';
import { readRows } from './requests-repo.js';
import type { StoredRow } from '../../kit/rows/rows.js';

/** How many past permission prompts a rule is tried on, and suggestions are drawn from. */
export const QUESTION_HISTORY_LIMIT = 500;

/** A stored row as the rule history reads it: a permission prompt, what became of it, and whether a rule decided it. */
export function questionRow(row: StoredRow): QuestionRow | undefined {
  if (row.request.kind !== 'permission') return undefined;
  return {
    id: row.elicitationId,
    createdAt: row.createdAt,
    request: row.request,
    // `unknown` (decided, but not in a way this browser saw) is no answer to compare with.
    decision: row.verdict === 'approved' || row.verdict === 'rejected' ? row.verdict : null,
    byRule: row.decidedVia === 'rule',
  };
}

/**
 * The newest `limit` permission prompts, newest first: one range of the kind index read backwards, never a scan of
 * the table. A row that no longer fits is skipped (so a corrupt one makes the list one shorter).
 */
export async function recentQuestions(db: ElicitlyDb, limit = QUESTION_HISTORY_LIMIT): Promise<QuestionRow[]> {
  const raws = await db.requests.where('[kind+createdAt+elicitationId]').between(...prefixRange(['permission'])).reverse().limit(limit).toArray();
  return readRows(raws).flatMap((row) => questionRow(row) ?? []);
}
