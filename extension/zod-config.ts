import * as z from 'zod';

// Extension pages and workers forbid eval by CSP: without this, zod probes `new Function` on first use, which the
// browser refuses (and reports) before zod falls back to its interpreter anyway.
z.config({ jitless: true });
