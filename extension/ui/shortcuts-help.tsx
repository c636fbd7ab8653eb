import { useEffect, useRef } from 'preact/hooks';

/** The shortcuts, as the help overlay lists them. */
const SHORTCUTS: readonly { keys: string; does: string }[] = [
  { keys: 'j / k', does: 'next / previous request in the inbox' },
  { keys: 'Enter', does: 'open the request' },
  { keys: 'x', does: 'select a request that is approved as-is, to approve or reject several at once' },
  { keys: 'n', does: 'open the next pending request (after a decision)' },
  { keys: 'Ctrl+Enter', does: 'in a review: submit (approve)' },
  { keys: 'Esc', does: 'in a review: cancel (reject); closes this help' },
  { keys: '?', does: 'show or hide this help' },
];

/** The `?` overlay: every shortcut, closed with Esc or its button; focus goes to it and back. */
export function ShortcutsHelp({ onClose }: { onClose(): void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    close.current?.focus();
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      // Esc belongs to the overlay while it is open, not to a review behind it (where it means "cancel").
      e.preventDefault();
      e.stopImmediatePropagation();
      onClose();
    };
    document.addEventListener('keydown', onKeyDown, { capture: true });
    return () => {
      document.removeEventListener('keydown', onKeyDown, { capture: true });
      before?.focus();
    };
  }, [onClose]);
  return (
    <div class="shortcuts-help" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map((s) => (
          <div key={s.keys}>
            <dt><kbd>{s.keys}</kbd></dt>
            <dd>{s.does}</dd>
          </div>
        ))}
      </dl>
      <button type="button" ref={close} onClick={onClose}>Close</button>
    </div>
  );
}
