import { elicitAppDecide } from './elicit-app-decide.js';
import { elicitAppView } from './elicit-app-view.js';
import { elicitApproval } from './elicit-approval.js';
import { elicitAwait } from './elicit-await.js';
import { elicitCancel } from './elicit-cancel.js';
import { elicitConfirm } from './elicit-confirm.js';
import { elicitDoctor } from './elicit-doctor.js';
import { elicitForm } from './elicit-form.js';
import { elicitProposal } from './elicit-proposal.js';
import { elicitResult } from './elicit-result.js';
import { elicitSelection } from './elicit-selection.js';
import { elicitStatus } from './elicit-status.js';
import type { Tool } from './tool.js';

/**
 * Every tool's definition, loaded at once: what the listing is computed from (tool-listing.ts, at build time for the
 * bundle). A running server loads one definition when its tool is first called (registry.ts).
 */
export const ALL_TOOLS: readonly Tool[] = [
  elicitAppDecide,
  elicitAppView,
  elicitApproval,
  elicitAwait,
  elicitCancel,
  elicitConfirm,
  elicitDoctor,
  elicitForm,
  elicitProposal,
  elicitResult,
  elicitSelection,
  elicitStatus,
];
