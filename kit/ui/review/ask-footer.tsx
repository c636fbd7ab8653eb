import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ConfirmCancel, type CancelWording } from './confirm-cancel.js';
import { FeedbackView, GeneralIssues } from './decision-feedback.js';
import type { Review } from './use-review.js';

const DISMISS: CancelWording = {
  question: 'Dismiss without answering?',
  text: 'Dismiss without answering? The agent is told you declined to answer.',
  confirm: 'Yes, dismiss',
  keep: 'Keep answering',
};

/**
 * The end of every ask (a question, a form, a choice): the answer buttons the ask supplies, then Dismiss. No comment
 * box: an ask's result carries no comment, so the agent would never read one.
 */
export function AskFooter({ review, children, keys }: { review: Review; children: ComponentChildren; keys: string }) {
  const dismissHint = useId();
  const { footer } = review;
  return (
    <>
      <GeneralIssues issues={footer.generalIssues} />
      <FeedbackView feedback={footer.feedback} />
      <footer class="review-footer">
        {children}
        <button type="button" aria-describedby={dismissHint} disabled={footer.frozen} onClick={footer.onCancel}>Dismiss</button>
        <span id={dismissHint} class="button-hint">declines to answer</span>
        <span class="muted hint">{keys}</span>
      </footer>
      {footer.confirming && <ConfirmCancel wording={DISMISS} busy={footer.frozen} onConfirm={footer.onCancel} onClose={footer.onCloseConfirm} />}
    </>
  );
}

/** An answer button with the fixed words that say what it sends: the agent's label only renames it and may say anything. */
export function AnswerButton({ label, hint, primary, disabled, onClick }: {
  label: ComponentChildren;
  hint: string;
  primary?: boolean;
  disabled: boolean;
  onClick(): void;
}) {
  const hintId = useId();
  return (
    <>
      <button type="button" class={primary ? 'primary' : undefined} aria-describedby={hintId} disabled={disabled} onClick={onClick}>{label}</button>
      <span id={hintId} class="button-hint">{hint}</span>
    </>
  );
}
