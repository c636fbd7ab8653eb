import type { RequestedSchema } from '../../shared/requested-schema.js';

/** The single-choice field the host shows; the options carry the caller's labels so the dialog localizes. */
export const CONFIRM_FIELD = 'answer';

export function confirmRequestedSchema(yesLabel: string, noLabel: string): RequestedSchema {
  return {
    type: 'object',
    properties: {
      [CONFIRM_FIELD]: {
        type: 'string',
        title: 'Answer',
        oneOf: [
          { const: 'yes', title: yesLabel },
          { const: 'no', title: noLabel },
        ],
      },
    },
    required: [CONFIRM_FIELD],
  };
}

export type HostAnswer =
  | { action: 'accept'; content: Record<string, unknown> }
  | { action: 'decline' | 'cancel' }
  | { action: 'error'; error: string };

export type ConfirmResult =
  | { confirmed: boolean; action: 'accept' | 'decline' }
  | { confirmed: null; action: 'cancel'; question: string }
  | { confirmed: null; question: string; error: string };

/** Seed 000's table, exactly; an accept that picked neither option is an error, never a guess. */
export function mapConfirm(question: string, answer: HostAnswer): ConfirmResult {
  switch (answer.action) {
    case 'accept': {
      const choice = answer.content[CONFIRM_FIELD];
      if (choice === 'yes') return { confirmed: true, action: 'accept' };
      if (choice === 'no') return { confirmed: false, action: 'accept' };
      return { confirmed: null, question, error: `the host accepted without choosing an option (got ${JSON.stringify(choice) ?? 'nothing'})` };
    }
    case 'decline':
      return { confirmed: false, action: 'decline' };
    case 'cancel':
      return { confirmed: null, action: 'cancel', question };
    case 'error':
      return { confirmed: null, question, error: answer.error };
  }
}
