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
import type { ToolDefinition } from './tool.js';

/** Hosts list tools in registration order; alphabetical keeps the list predictable as it grows. */
export const TOOLS: readonly ToolDefinition[] = [
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
].sort((a, b) => a.name.localeCompare(b.name));
