import type { McpServer } from '@modelcontextprotocol/server';
import type { Session } from '../session.js';
import { registerTool, type Tool } from './tool.js';
import { TOOL_LISTINGS } from './tool-listing.js';

/**
 * Each tool's definition (its zod schemas and handler), imported on its first call: a host spawns a server per session
 * and lists the tools at once, but most sessions call few of them, many none.
 */
const LOADERS: Readonly<Record<string, () => Promise<Tool>>> = {
  elicit_app_decide: async () => (await import('./elicit-app-decide.js')).elicitAppDecide,
  elicit_app_view: async () => (await import('./elicit-app-view.js')).elicitAppView,
  elicit_approval: async () => (await import('./elicit-approval.js')).elicitApproval,
  elicit_await: async () => (await import('./elicit-await.js')).elicitAwait,
  elicit_cancel: async () => (await import('./elicit-cancel.js')).elicitCancel,
  elicit_confirm: async () => (await import('./elicit-confirm.js')).elicitConfirm,
  elicit_doctor: async () => (await import('./elicit-doctor.js')).elicitDoctor,
  elicit_form: async () => (await import('./elicit-form.js')).elicitForm,
  elicit_proposal: async () => (await import('./elicit-proposal.js')).elicitProposal,
  elicit_result: async () => (await import('./elicit-result.js')).elicitResult,
  elicit_selection: async () => (await import('./elicit-selection.js')).elicitSelection,
  elicit_status: async () => (await import('./elicit-status.js')).elicitStatus,
};

/** The loader of a listed tool; a listing without one is a build that went wrong, so it fails loudly at start. */
export function loaderOf(name: string): () => Promise<Tool> {
  const load = LOADERS[name];
  if (!load) throw new Error(`tool ${name} is listed but has no loader in server/mcp/tools/registry.ts`);
  return load;
}

/** Registers every tool once per connection; a host that renders no apps sees no app-only tool. */
export function registerTools(server: McpServer, session: Session): void {
  for (const listing of TOOL_LISTINGS) if (!listing.appOnly || session.app) registerTool(server, listing, loaderOf(listing.name), session);
}
