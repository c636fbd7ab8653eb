import { ElicitSelectionInputSchema, ElicitSelectionOutputSchema, checkSelectionInput, selectedFromHost, selectionRequestedSchema } from '../../../shared/ask-input.js';
import { defineAskTool } from './ask-tool.js';

export const elicitSelection = defineAskTool({
  name: 'elicit_selection',
  title: 'Ask the person to choose',
  description:
    'Ask the person to pick one option (or several, with multiple: true) and get {action, selected, via} back; selected ' +
    'lists the chosen values (one for a single choice) and is null unless accepted. It goes to the host\'s own dialog ' +
    'when the host really shows one, otherwise to the Elicitly browser extension, which also shows each option\'s ' +
    'description. action "pending" (with an elicitationId) means no answer yet: continue with elicit_await and elicit_result.',
  inputSchema: ElicitSelectionInputSchema,
  outputSchema: ElicitSelectionOutputSchema,
  plan(args) {
    const checked = checkSelectionInput(args);
    if (!checked.ok) return checked;
    const { ask, waitSeconds, via } = checked.value;
    return {
      ok: true,
      plan: {
        via,
        requestedSchema: selectionRequestedSchema(ask),
        fromHost: (outcome) => {
          if (outcome.action === 'error') return { action: 'error', selected: null, error: outcome.error };
          if (outcome.action !== 'accept') return { action: outcome.action, selected: null };
          const selected = selectedFromHost(ask, outcome.content);
          return selected ? { action: 'accept', selected } : { action: 'error', selected: null, error: 'the host accepted without a valid choice' };
        },
        ask,
        unanswered: { action: 'cancel', selected: null },
        noAnswerYet: { selected: null },
        waitSeconds,
      },
    };
  },
});
