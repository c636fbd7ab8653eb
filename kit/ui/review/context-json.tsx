import { VisibleText } from '../visible-text.js';

/**
 * The agent's context as JSON, named "Context". A region, because a bare `pre` is generic and ARIA prohibits naming
 * a generic element: screen readers would drop the label (axe: aria-prohibited-attr). It scrolls past 20rem, and
 * browsers make an overflowing scroller keyboard-focusable, where the name is what is announced.
 */
export function ContextJson({ text }: { text: string }) {
  return <pre class="context-json" role="region" aria-label="Context"><VisibleText text={text} /></pre>;
}
