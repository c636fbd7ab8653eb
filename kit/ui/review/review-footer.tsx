import { useId } from 'preact/hooks';
import type { ReviewLabels } from '../../../shared/approval-input.js';
import { ConfirmCancel } from './confirm-cancel.js';
import { FeedbackView, GeneralIssues, type Feedback } from './decision-feedback.js';
import { VisibleText } from '../visible-text.js';

interface ReviewFooterProps {
  generalIssues: readonly string[];
  comment: string;
  onComment(text: string): void;
  feedback: Feedback | null;
  labels: ReviewLabels;
  /** What each button does, in fixed words: the agent's labels only rename them (seed 004) and may say anything. */
  hints: { ok: string; cancel: string };
  frozen: boolean;
  onOk(): void;
  onCancel(): void;
  confirming: boolean;
  onCloseConfirm(): void;
}

/** What every review ends with, the same for approvals and proposals: issues, comment, feedback, the two buttons. */
export function ReviewFooter(p: ReviewFooterProps) {
  const okHint = useId();
  const cancelHint = useId();
  return (
    <>
      <GeneralIssues issues={p.generalIssues} />

      <label class="comment">
        <span>Comment (optional)</span>
        <textarea aria-label="Comment (optional)" maxLength={4000} rows={2} value={p.comment} onInput={(e) => p.onComment(e.currentTarget.value)} />
      </label>

      <FeedbackView feedback={p.feedback} />

      <footer class="review-footer">
        <button type="button" class="primary" aria-describedby={okHint} disabled={p.frozen} onClick={p.onOk}><VisibleText text={p.labels.ok} /></button>
        <span id={okHint} class="button-hint">{p.hints.ok}</span>
        <button type="button" aria-describedby={cancelHint} disabled={p.frozen} onClick={p.onCancel}><VisibleText text={p.labels.cancel} /></button>
        <span id={cancelHint} class="button-hint">{p.hints.cancel}</span>
        <span class="muted hint">Ctrl+Enter submits · Esc cancels</span>
      </footer>

      {p.confirming && <ConfirmCancel cancelLabel={p.labels.cancel} busy={p.frozen} onConfirm={p.onCancel} onClose={p.onCloseConfirm} />}
    </>
  );
}
