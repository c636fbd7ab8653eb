// The bin (`dist/server/main.js`): turns on V8's code cache before anything else is compiled, then runs the server.
// A host spawns a server per session; with the cache (Node ≥ 22.1; Node 20 has none) a start reads the bundle's
// compiled code from disk instead of parsing and compiling it again. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import nodeModule from 'node:module';
import { holdYoungGeneration } from './young-generation.js';

// First, before the start's allocations would grow it; released once the start is over (main.ts).
holdYoungGeneration();

try {
  // Looked up, not imported: the types here are Node 20's, which has no compile cache.
  if ('enableCompileCache' in nodeModule && typeof nodeModule.enableCompileCache === 'function') nodeModule.enableCompileCache();
} catch {
  // A cache directory that cannot be written only costs the speed-up.
}
await import('./main.js');
