import { useLayoutEffect, useRef } from 'preact/hooks';
import type { RefObject } from 'preact';

interface ReviewKeys {
  onSubmit(): void;
  onEscape(): void;
}

/**
 * Ctrl/Cmd+Enter submits and Escape asks to cancel, from anywhere in the review — including when nothing is focused
 * (the page body), but not from other parts of the page such as the inbox.
 */
export function useReviewKeys(root: RefObject<HTMLElement | null>, keys: ReviewKeys): void {
  // Handlers change every render; the listener is installed once and reads the latest ones.
  const latest = useRef(keys);
  latest.current = keys;
  // Installed with the render, not after the next paint: a key pressed as soon as the review shows must reach it (a
  // tab in the background paints late, or not at all).
  useLayoutEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing) return;
      const target = e.target as Node | null;
      const el = root.current;
      const inReview = !target || target === document.body || target === document.documentElement || target === document || (el?.contains(target) ?? false);
      if (!inReview) return;
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        latest.current.onSubmit();
      } else if (e.key === 'Escape') {
        e.preventDefault();
        latest.current.onEscape();
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [root]);
}
