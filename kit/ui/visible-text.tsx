import type { ComponentChild } from 'preact';
import { hiddenCharacters, visibleParts, type HiddenCharacter } from '../core/visible-text.js';

function HiddenChar({ char }: { char: HiddenCharacter }) {
  return <span class="hidden-char" title={`${char.code} ${char.name}: a character that does not show`}>{char.token}</span>;
}

/**
 * Text as children: visible runs as text nodes, each character that would not show (a bidi override, a zero-width
 * space, a tag character) as a marked token. The character itself never reaches the DOM, so it cannot reorder or hide
 * what is around it.
 */
export function visibleChildren(text: string): ComponentChild[] {
  return visibleParts(text).map((part, i) => (typeof part === 'string' ? part : <HiddenChar key={i} char={part} />));
}

/** Agent text as a reviewer must read it: exactly what was written, including what would not show. */
export function VisibleText({ text }: { text: string }) {
  return <>{visibleChildren(text)}</>;
}

/**
 * Next to an editable value that holds characters that do not show: the input keeps the real value (what is sent is
 * exactly what is there), so the warning is what tells the person they are there.
 */
export function HiddenCharactersWarning({ id, value }: { id: string; value: unknown }) {
  if (typeof value !== 'string') return null;
  const found = hiddenCharacters(value);
  if (found.length === 0) return null;
  return (
    <p id={id} class="hidden-warning">
      This value holds characters that do not show, and they are sent as they are:{' '}
      {found.map((char, i) => (
        <span key={char.codePoint}>
          {i > 0 && ', '}
          <HiddenChar char={char} /> {char.name}
        </span>
      ))}
      .
    </p>
  );
}
