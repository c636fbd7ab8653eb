import type { RequestRow } from '../db/rows.js';

/** How a request's kind reads to a person, the same in the inbox, the notification, the history and the detail. */
export const KIND_LABEL: Record<RequestRow['kind'], string> = {
  approval: 'Approval',
  proposal: 'Proposal',
  confirm: 'Question',
  form: 'Form',
  selection: 'Choice',
  permission: 'Permission',
};
