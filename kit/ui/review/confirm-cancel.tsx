import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { VisibleText } from '../visible-text.js';

/** What the in-page confirmation says: a review cancels a request, an ask is dismissed without an answer. */
export interface CancelWording {
  question: string;
  text: ComponentChildren;
  confirm: string;
  keep: string;
}

/**
 * Escape is easy to hit by accident, so it asks first; in-page rather than window.confirm, which blocks the
 * extension page and cannot be styled or tested.
 */
export function ConfirmCancel({ cancelLabel, wording, busy, onConfirm, onClose }: {
  cancelLabel?: string;
  wording?: CancelWording;
  busy?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  const keep = useRef<HTMLButtonElement>(null);
  // The harmless choice gets focus, so a second Enter does not discard the review.
  useEffect(() => keep.current?.focus(), []);
  const words = wording ?? {
    question: 'Cancel this request?',
    text: <>Cancel this request? The agent is told you chose “<VisibleText text={cancelLabel ?? ''} />”; the values here are not sent.</>,
    confirm: 'Yes, cancel',
    keep: 'Keep reviewing',
  };
  return (
    <div role="alertdialog" aria-label={words.question} class="confirm-cancel">
      <p>{words.text}</p>
      <button type="button" class="danger" disabled={busy} onClick={onConfirm}>{words.confirm}</button>
      <button type="button" ref={keep} onClick={onClose}>{words.keep}</button>
    </div>
  );
}
