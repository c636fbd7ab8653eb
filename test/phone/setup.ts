// Phone page tests: zod without `new Function` (the page's CSP has no unsafe-eval), and the DOM cleaned between tests.
import '../../extension/zod-config.js';
import { cleanup } from '@testing-library/preact';
import { afterEach } from 'vitest';

afterEach(() => {
  cleanup();
  localStorage.clear();
});
