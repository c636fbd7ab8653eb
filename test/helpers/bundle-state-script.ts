import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles a script that imports the real `StateDir` (as `StateDir`) into `outfile`, so plain `node` processes start in
 * milliseconds and race (or hang) for real. `body` is the script after that import.
 */
export async function bundleStateScript(outfile: string, body: string): Promise<void> {
  const stateDir = JSON.stringify(fileURLToPath(new URL('../../server/state-dir.ts', import.meta.url)));
  await build({
    stdin: { contents: `import { StateDir } from ${stateDir};\n${body}`, resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    logLevel: 'error',
  });
}
