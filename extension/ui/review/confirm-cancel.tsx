import { useEffect, useRef } from 'preact/hooks';
import { VisibleText } from '../visible-text.js';

/**
 * Escape is easy to hit by accident, so it asks first; in-page rather than window.confirm, which blocks the
 * extension page and cannot be styled or tested.
 */
export function ConfirmCancel({ cancelLabel, busy, onConfirm, onClose }: {
  cancelLabel: string;
  busy?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  const keep = useRef<HTMLButtonElement>(null);
  // The harmless choice gets focus, so a second Enter does not discard the review.
  useEffect(() => keep.current?.focus(), []);
  return (
    <div role="alertdialog" aria-label="Cancel this request?" class="confirm-cancel">
      <p>Cancel this request? The agent is told you chose “<VisibleText text={cancelLabel} />”; the values here are not sent.</p>
      <button type="button" class="danger" disabled={busy} onClick={onConfirm}>Yes, cancel</button>
      <button type="button" ref={keep} onClick={onClose}>Keep reviewing</button>
    </div>
  );
}
