// The bin (`dist/server/main.js`): turns on V8's code cache before anything else is compiled, then runs the server.
// A host spawns a server per session; with the cache (Node ≥ 22.1; Node 20 has none) a start reads the bundle's
// compiled code from disk instead of parsing and compiling it again. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import nodeModule from 'node:module';
import v8 from 'node:v8';

// The young generation stays at its first size instead of growing under allocation (V8 grows it up to 16 MB a half and
// keeps it): a server spends its life idle beside a host session, one per session, and the start's burst of schema
// building left it ~5 MB bigger for good (idle RSS 64 → 59 MiB on Node 20); the price is more, smaller scavenges in a
// burst of creates. Set first, before the start's allocations would grow it.
v8.setFlagsFromString('--semi-space-growth-factor=1');

try {
  // Looked up, not imported: the types here are Node 20's, which has no compile cache.
  if ('enableCompileCache' in nodeModule && typeof nodeModule.enableCompileCache === 'function') nodeModule.enableCompileCache();
} catch {
  // A cache directory that cannot be written only costs the speed-up.
}
await import('./main.js');
