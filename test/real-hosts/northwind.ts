import { fileURLToPath } from 'node:url';

/** What the fixture server (`northwind-server.ts`) is called, asks and answers; the tests check against these. */
export const NORTHWIND = {
  server: 'northwind',
  tool: 'release',
  message: 'Which version should Northwind release?',
  schema: {
    type: 'object' as const,
    properties: { version: { type: 'string' as const, title: 'Version' }, notify: { type: 'boolean' as const, title: 'Notify customers' } },
    required: ['version'],
  },
  /** The tool's result starts with this, then the answer it got as JSON. */
  receivedPrefix: 'northwind received:',
  /** How a host starts it: node runs the TypeScript through tsx. */
  command: process.execPath,
  // tsx by absolute URL: the host starts the server in its own working directory, where tsx does not resolve.
  args: ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./northwind-server.ts', import.meta.url))],
};
