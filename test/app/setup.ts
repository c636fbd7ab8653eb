// App tests: the DOM cleaned between tests; zod without `new Function`, as in the view (its CSP has no unsafe-eval).
import '../../extension/zod-config.js';
import { cleanup } from '@testing-library/preact';
import { afterEach } from 'vitest';

afterEach(() => cleanup());
