import { existsSync } from 'node:fs';
import { SERVER_ENTRY } from './helpers/mcp-harness.js';

/** Integration tests spawn the built server, as a host would: fail loudly when it was not built. */
export default function setup(): void {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run "npm test" (it builds first) or "npm run build".`);
}
