import type { McpServer } from '@modelcontextprotocol/server';
import type { Session } from '../session.js';
import { registerTool, type Tool } from './tool.js';
import { TOOL_LISTINGS } from './tool-listing.js';
import { TOOL_LOADERS } from './tool-loaders.js';

/** The loader of a listed tool; a listing without one is a build that went wrong, so it fails loudly at start. */
export function loaderOf(name: string): () => Promise<Tool> {
  const load = TOOL_LOADERS[name];
  if (!load) throw new Error(`tool ${name} is listed but has no loader in server/mcp/tools/tool-loaders.ts`);
  return load;
}

/** Registers every tool once per connection; a host that renders no apps sees no app-only tool. */
export function registerTools(server: McpServer, session: Session): void {
  for (const listing of TOOL_LISTINGS) if (!listing.appOnly || session.app) registerTool(server, listing, loaderOf(listing.name), session);
}
