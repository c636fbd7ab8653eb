import type { McpServer } from '@modelcontextprotocol/server';
import type { Session } from '../session.js';
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
import { registerTool, type Tool } from './tool.js';

/** Hosts list tools in registration order; alphabetical keeps the list predictable as it grows. */
const TOOLS: readonly Tool[] = [
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

/** Registers every tool once per connection; a host that renders no apps sees no app-only tool. */
export function registerTools(server: McpServer, session: Session): void {
  for (const tool of TOOLS) if (!tool.appOnly || session.app) registerTool(server, tool, session);
}
