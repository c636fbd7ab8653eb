import { useEffect, useState } from 'preact/hooks';
import type { QuestionRow } from '../../shared/rule-history.js';
import type { ElicitlyDb } from '../db/database.js';
import { recentQuestions } from '../db/question-history.js';

/**
 * The person's recent permission prompts, read once when a view that tries rules on them opens: undefined while
 * reading, null when the read failed. Not live: re-reading 500 rows, and parsing their commands again, at every new
 * request would cost more than a dry run that is a few seconds old.
 */
export function useQuestionHistory(db: ElicitlyDb): QuestionRow[] | null | undefined {
  const [rows, setRows] = useState<QuestionRow[] | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    recentQuestions(db).then(
      (read) => {
        if (live) setRows(read);
      },
      (error: unknown) => {
        console.error('elicitly: reading the history for rules failed', error);
        if (live) setRows(null);
      },
    );
    return () => {
      live = false;
    };
  }, [db]);
  return rows;
}
