/**
 * Single-letter shortcuts must never steal a letter the person is typing, nor a browser or system shortcut: they act
 * only when focus is not in a text field and no modifier (other than Shift, for `?`) is held.
 */
export function isShortcut(e: KeyboardEvent): boolean {
  if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return false;
  const target = e.target;
  if (!(target instanceof HTMLElement)) return true;
  if (target.isContentEditable) return false;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return false;
  if (tag !== 'INPUT') return true;
  // A checkbox or a button-like input types nothing.
  const type = (target as HTMLInputElement).type;
  return type === 'checkbox' || type === 'radio' || type === 'button' || type === 'submit';
}
