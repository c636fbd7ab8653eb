// axe-core on an extension page in both colour schemes: the stylesheet switches its colours on prefers-color-scheme,
// so a contrast that passes in one scheme says nothing about the other.
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { describeViolations, seriousViolations, violationsOf } from './axe.js';

const SCHEMES = ['light', 'dark'] as const;

/** The relative luminance (0 black … 1 white) of the body's computed background. */
function bodyLuminance(page: Page): Promise<number> {
  return page.evaluate(() => {
    const [r = 0, g = 0, b = 0] = (getComputedStyle(document.body).backgroundColor.match(/\d+/g) ?? []).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
}

/**
 * Asserts no serious or critical axe violation on `page` as it is shown now, in the light and then the dark scheme —
 * each only after the page's background has switched, so a scheme that did not apply cannot pass unseen. Each
 * scheme's violations are a soft assertion, so one report names both. The page is left in the browser's own scheme.
 */
export async function expectAccessibleInEachScheme(page: Page, where: string): Promise<void> {
  try {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      const luminance = await bodyLuminance(page);
      if (scheme === 'light') expect(luminance, `${where}: the light scheme's background`).toBeGreaterThan(0.8);
      else expect(luminance, `${where}: the dark scheme's background`).toBeLessThan(0.2);
      const violations = await seriousViolations(page);
      expect.soft(violations, describeViolations(`${where}, ${scheme} scheme`, violations)).toEqual([]);
    }
    // axe rates a page without an <h1> moderate; a page's title still matters to who navigates by headings.
    const headings = await violationsOf(page, ['page-has-heading-one']);
    expect.soft(headings, describeViolations(where, headings)).toEqual([]);
  } finally {
    await page.emulateMedia({ colorScheme: null });
  }
}
