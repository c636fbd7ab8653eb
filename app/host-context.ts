import { applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

/**
 * Follows the host's look: its light/dark theme (`data-theme` and `color-scheme` on <html>) and its style variables,
 * which app.css maps onto the extension's palette. Without a theme from the host, `color-scheme: light dark` keeps
 * following the system's (prefers-color-scheme). The display mode is mirrored for CSS (the grid's height).
 */
export function applyHostContext(ctx: McpUiHostContext | undefined, root: HTMLElement = document.documentElement): void {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables, root);
  if (ctx.displayMode) root.dataset.displayMode = ctx.displayMode;
}

/** Whether the host can show the view full screen now that it is not. */
export function canGoFullscreen(ctx: McpUiHostContext | undefined): boolean {
  return (ctx?.availableDisplayModes?.includes('fullscreen') ?? false) && ctx?.displayMode !== 'fullscreen';
}

/**
 * The review does not fit the frame: the page scrolls sideways, or the grid does inside its own scroll box (its
 * columns have a minimum width in the app, app.css).
 */
export function widerThanFrame(doc: Document = document): boolean {
  if (doc.documentElement.scrollWidth > (doc.defaultView?.innerWidth ?? Infinity)) return true;
  return Array.from(doc.querySelectorAll('.grid-scroll')).some((el) => el.scrollWidth > el.clientWidth + 1);
}
