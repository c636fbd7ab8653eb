// App tests: the DOM cleaned between tests; zod without `new Function`, as in the view (its CSP has no unsafe-eval).
import '../../kit/zod-config.js';
import { cleanup, configure } from '@testing-library/preact';
import { afterEach } from 'vitest';

// findBy*/waitFor give up after 1 s by default; in the full suite (4 workers on 2 cores, browsers alongside) a render
// can take longer. A wait still ends as soon as what it waits for is there.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => cleanup());
