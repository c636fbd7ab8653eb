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
