import * as z from 'zod/mini';

// Extension pages and workers forbid eval by CSP: without this, zod probes `new Function` on first use, which the
// browser refuses (and reports) before zod falls back to its interpreter anyway. zod/mini's `config` is the one zod's
// classic API reads too (both are zod's core), and a page sets it before it has loaded the classic API.
z.config({ jitless: true });
