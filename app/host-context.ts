import type { HostContext } from './host-messages.js';

/**
 * Follows the host's look: its light/dark theme (`data-theme` and `color-scheme` on <html>) and its style variables,
 * which app.css maps onto the extension's palette. Without a theme from the host, `color-scheme: light dark` keeps
 * following the system's (prefers-color-scheme). The display mode is mirrored for CSS (the grid's height).
 */
export function applyHostContext(ctx: HostContext | undefined, root: HTMLElement = document.documentElement): void {
  if (!ctx) return;
  if (ctx.theme) {
    document.documentElement.dataset.theme = ctx.theme;
    document.documentElement.style.colorScheme = ctx.theme;
  }
  // Custom properties only: a host's name for anything else is not set (no property of the page is the host's to set).
  for (const [name, value] of Object.entries(ctx.styles?.variables ?? {})) if (name.startsWith('--') && value !== undefined) root.style.setProperty(name, value);
  // Read back from the page, not from this context: a context change may carry one variable and keep the other.
  if (usesHostPrimary((name) => root.style.getPropertyValue(name))) root.dataset.hostPrimary = '';
  else delete root.dataset.hostPrimary;
  if (ctx.displayMode) root.dataset.displayMode = ctx.displayMode;
}

/** The host's colours for the primary button: the background and the text that goes on it. */
export const HOST_PRIMARY_PAIR = ['--color-background-inverse', '--color-text-inverse'] as const;

/**
 * Whether the primary button takes the host's colours: only when the host set both of the pair (app.css), since its
 * text over the view's own background, or the reverse, has no contrast anyone checked.
 */
export function usesHostPrimary(valueOf: (name: string) => string | undefined): boolean {
  return HOST_PRIMARY_PAIR.every((name) => (valueOf(name) ?? '').trim() !== '');
}

/**
 * What the Full screen button offers: full screen for a pending review, where a wide grid is worth the room (a decided
 * one is not), the way back whenever the view is full screen; nothing when the host does not offer full screen. The
 * view asks only when the person clicks.
 */
export function fullscreenToggle(ctx: HostContext | undefined, pending: boolean): 'fullscreen' | 'inline' | null {
  if (!ctx?.availableDisplayModes?.includes('fullscreen')) return null;
  if (ctx.displayMode === 'fullscreen') return 'inline';
  return pending ? 'fullscreen' : null;
}
