import type { Status } from '../../shared/lifecycle.js';

/**
 * What became of a request, as the history tells it. The status alone cannot say it: `consumed` (the agent read the
 * result) is the same for an approval and a rejection. `unknown`: decided, but not by a decision this browser saw —
 * another reviewer decided, and the agent collected it before this browser heard which way.
 *
 * Without zod: the database derives verdicts on every page before the page has loaded zod's classic API, so its check
 * is zod/mini's (database.ts); rows.ts makes them `VerdictSchema`.
 */
export const VERDICTS = ['pending', 'approved', 'rejected', 'withdrawn', 'expired', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** The parts of a row the verdict depends on. */
export interface VerdictInputs {
  status: Status;
  outcome?: { decision: 'approved' | 'rejected' } | undefined;
  delivery?: 'queued' | 'delivered' | 'refused' | undefined;
}

/**
 * The verdict of a row as it is now; `previous` is the one stored before this change, which is what still knows the
 * decision once the status has moved on to `consumed` (the hub's `request.removed` carries no decision).
 */
export function deriveVerdict(row: VerdictInputs, previous?: Verdict): Verdict {
  switch (row.status) {
    case 'pending':
      return 'pending';
    case 'approved':
    case 'rejected':
      return row.status;
    case 'canceled':
      return 'withdrawn';
    case 'expired':
      return 'expired';
    case 'consumed':
      if (previous === 'approved' || previous === 'rejected') return previous;
      // Only a decision the hub took counts: a refused one (decided elsewhere first) says nothing about what won.
      return row.outcome && row.delivery === 'delivered' ? row.outcome.decision : 'unknown';
  }
}

/**
 * Whether the agent has collected the decision: only a decided request can be, and `consumed` says it was. Null for
 * a request with nothing to collect (pending, withdrawn, expired).
 */
export function collected(row: { status: Status }, verdict: Verdict): boolean | null {
  if (row.status === 'consumed') return true;
  return verdict === 'approved' || verdict === 'rejected' ? false : null;
}
