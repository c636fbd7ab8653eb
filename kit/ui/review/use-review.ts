import { useEffect, useRef, useState } from 'preact/hooks';
import type { FieldIssue } from '../../../shared/field-issues.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide, Decision } from '../../messages.js';
import { splitIssues, useDecision, type SplitIssues } from './decision-feedback.js';
import { refusalFeedback, refusedAttempt } from './refused-attempt.js';
import { useReviewKeys } from './use-review-keys.js';

const NO_ISSUES: SplitIssues = { byKey: new Map(), general: [] };

/** What the person submits once the local check passed: the form's part of the decision. */
type Payload = Pick<Decision, 'values' | 'included'>;
type Checked = { ok: true; payload: Payload } | { ok: false; issues: FieldIssue[] };

/**
 * Everything a review does the same way whatever it reviews: the comment, issues next to fields (focusing the first
 * invalid one), the decision in flight, the Esc confirmation and Ctrl/Cmd+Enter, and resuming a refused attempt.
 * The component supplies only its form and the check of its values; `check` null: there is no one answer Ctrl+Enter
 * could mean (a yes/no question), and the component answers with `answer`.
 */
export function useReview(row: RequestRow, keys: readonly string[], decide: Decide, onDone: (() => void) | undefined, check: (() => Checked) | null) {
  const [attempt] = useState(() => refusedAttempt(row));
  const [comment, setComment] = useState(attempt?.comment ?? '');
  const [issues, setIssues] = useState<SplitIssues>(() => (attempt ? splitIssues(attempt.issues, keys) : NO_ISSUES));
  const [confirming, setConfirming] = useState(false);
  const [focusInvalid, setFocusInvalid] = useState(0);
  const [refused] = useState(() => refusalFeedback(row));
  const decision = useDecision(decide, onDone, refused);
  const root = useRef<HTMLElement>(null);
  const frozen = decision.busy || decision.settled;

  useEffect(() => {
    if (focusInvalid === 0) return;
    root.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [focusInvalid]);

  const showIssues = (found: readonly FieldIssue[]) => {
    setIssues(splitIssues(found, keys));
    if (found.length) setFocusInvalid((n) => n + 1);
  };

  /**
   * The live check of the fields that changed (an empty list clears a field's messages); the others keep theirs, which
   * still describe values that have not changed.
   */
  const showFieldMessages = (updates: ReadonlyMap<string, readonly string[]>) => {
    if (updates.size === 0) return;
    setIssues((prev) => {
      const byKey = new Map(prev.byKey);
      for (const [key, messages] of updates) {
        if (messages.length) byKey.set(key, messages);
        else byKey.delete(key);
      }
      return { ...prev, byKey };
    });
  };

  const cleanComment = comment.trim();
  const withComment = cleanComment ? { comment: cleanComment } : {};

  const approveWith = async (checked: Checked) => {
    if (frozen) return;
    setConfirming(false);
    if (!checked.ok) {
      decision.clearFeedback();
      showIssues(checked.issues);
      return;
    }
    setIssues(NO_ISSUES);
    showIssues(await decision.send({ elicitationId: row.elicitationId, decision: 'approved', ...checked.payload, ...withComment }));
  };

  const reject = async () => {
    if (frozen) return;
    setConfirming(false);
    await decision.send({ elicitationId: row.elicitationId, decision: 'rejected', ...withComment });
  };

  const approve = () => {
    if (check && !frozen) void approveWith(check());
  };

  useReviewKeys(root, {
    onSubmit: approve,
    onEscape: () => setConfirming((open) => !open && !frozen),
  });

  return {
    root,
    issues,
    showFieldMessages,
    showIssues,
    frozen,
    /** Approves with these values, already known to be acceptable (a yes or a no). */
    answer: (payload: Payload) => void approveWith({ ok: true, payload }),
    footer: {
      generalIssues: issues.general,
      comment,
      onComment: setComment,
      feedback: decision.feedback,
      frozen,
      onOk: approve,
      onCancel: () => void reject(),
      confirming,
      onCloseConfirm: () => setConfirming(false),
    },
  };
}

export type Review = ReturnType<typeof useReview>;
