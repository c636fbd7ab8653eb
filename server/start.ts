// The bin (`dist/server/main.js`): turns on V8's code cache before anything else is compiled, answers the handshake
// from the build's recorded answers while nothing else is loaded, then runs the server. A host spawns a server per
// session and waits for `initialize` and `tools/list`; loading the MCP SDK is most of a start, so the SDK loads only
// when a call needs it (server/mcp/fast-handshake.ts). With the cache (Node ≥ 22.1; Node 20 has none) a start reads the
// bundle's compiled code from disk instead of compiling it again. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import nodeModule from 'node:module';
import { startFastHandshake } from './mcp/fast-handshake.js';
import { readHandshakeAnswers } from './mcp/handshake-answers.js';
import { packageInfo } from './package-info.js';
import { fastStart, serveHint } from './start-options.js';
import { holdYoungGeneration } from './young-generation.js';

// First, before the start's allocations would grow it; released once the start is over (main.ts).
holdYoungGeneration();

try {
  // Looked up, not imported: the types here are Node 20's, which has no compile cache.
  if ('enableCompileCache' in nodeModule && typeof nodeModule.enableCompileCache === 'function') nodeModule.enableCompileCache();
} catch {
  // A cache directory that cannot be written only costs the speed-up.
}

/** Resolves when the SDK must load. In a function: the answers are garbage once main.ts has taken over. */
function answerHandshake(): Promise<void> | undefined {
  const argv = process.argv.slice(2);
  const fast = fastStart(argv, process.env);
  const recorded = fast && readHandshakeAnswers(new URL('./handshake/', import.meta.url));
  if (!recorded) return undefined;
  return new Promise<void>((load) => {
    // Once the handshake has settled, the configuration is checked (its schemas take ~30 ms to load): one that main.ts
    // would refuse loads it now, and it says why and exits, as without the fast start. Otherwise the SDK waits for a call.
    const settled = () => {
      import('./config.js').then(
        ({ parseConfig }) => {
          if (!parseConfig(argv, process.env).ok) load();
        },
        // Whatever kept it from loading, main.ts meets it too, and says so.
        () => load(),
      );
    };
    process.stderr.write(serveHint(packageInfo.version));
    startFastHandshake({ input: process.stdin, output: process.stdout, ...fast, ...recorded, load, settled });
  });
}

await answerHandshake();
await import('./main.js');
