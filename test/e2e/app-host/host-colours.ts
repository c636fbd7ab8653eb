// Shared by the host page (./host.ts, bundled for the browser) and the tests that assert the view follows it.

/** The style variables the host sends per theme: page colours and the inverse pair its own primary buttons use. */
export const HOST_COLOURS = {
  light: {
    '--color-background-primary': '#ffffff', '--color-text-primary': '#111111',
    '--color-background-inverse': '#1f1e1d', '--color-text-inverse': '#faf9f5',
  },
  dark: {
    '--color-background-primary': '#101214', '--color-text-primary': '#eeeeee',
    '--color-background-inverse': '#f0eee6', '--color-text-inverse': '#1f1e1d',
  },
} as const;

/**
 * A host's inverse pair (its primary buttons' background and text) whose each half, alone over the view's own
 * fallback for the other, is unreadable: dark text on the view's blue in light, the MCP Inspector's white text on the
 * view's light blue in dark (2.42:1). Only both together, or neither, may reach the button.
 */
export const ONE_SIDED_INVERSE = {
  light: { '--color-background-inverse': '#e8f0fe', '--color-text-inverse': '#0b1f3a' },
  dark: { '--color-background-inverse': '#1d4ed8', '--color-text-inverse': '#ffffff' },
} as const;

/** The view's own primary pair (app/app.css), which it keeps unless the host sends both of its pair. */
export const VIEW_PRIMARY = {
  light: { background: '#0b62d6', text: '#ffffff' },
  dark: { background: '#6aa8ff', text: '#16191d' },
} as const;
