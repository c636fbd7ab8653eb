import { ElicitConfirmInputSchema, ElicitConfirmOutputSchema, resolveConfirmInput } from '../../../shared/ask-input.js';
import { confirmRequestedSchema, mapConfirm } from '../confirm.js';
import { defineAskTool } from './ask-tool.js';

export const elicitConfirm = defineAskTool({
  name: 'elicit_confirm',
  title: 'Ask a yes/no question',
  description:
    'Ask the person a yes/no question and get {confirmed, action, via} back. It goes to the host\'s own dialog when the ' +
    'host really shows one, otherwise to the Elicitly browser extension (via says which). confirmed is null when the ' +
    'question was dismissed or failed; action "pending" (with an elicitationId) means the person has not answered yet: ' +
    'continue with elicit_await and elicit_result. For approvals with context or forms that must survive restarts, use elicit_approval.',
  inputSchema: ElicitConfirmInputSchema,
  outputSchema: ElicitConfirmOutputSchema,
  plan(args) {
    const input = resolveConfirmInput(args);
    if (!input.ok) return input;
    const { question, yes, no } = input;
    return {
      ok: true,
      plan: {
        via: args.via ?? 'auto',
        requestedSchema: confirmRequestedSchema(yes, no),
        fromHost: (outcome) => mapConfirm(question, outcome.action === 'accept' ? { action: 'accept', content: outcome.content } : outcome),
        ask: { kind: 'confirm', message: question, labels: { yes, no }, timeoutSeconds: args.timeoutSeconds ?? 3600 },
        unanswered: { confirmed: null, action: 'cancel', question },
        noAnswerYet: { confirmed: null, question },
        waitSeconds: args.waitSeconds,
      },
    };
  },
});
