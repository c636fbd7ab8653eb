import type { Tool } from './tool.js';

/**
 * Every tool, by name: its definition (zod schemas and handler) imported on its first call (registry.ts), since a host
 * spawns a server per session and lists the tools at once, but most sessions call few of them, many none; and all of
 * them at once for the listing (tool-listing.ts, run at build time for the bundle).
 */
export const TOOL_LOADERS: Readonly<Record<string, () => Promise<Tool>>> = {
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
