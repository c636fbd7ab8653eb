import { ElicitFormInputSchema, ElicitFormOutputSchema } from '../../../shared/ask-input.js';
import { checkRequestedSchema } from '../../../shared/requested-schema.js';
import { defineAskTool } from './ask-tool.js';

export const elicitForm = defineAskTool({
  name: 'elicit_form',
  title: 'Ask for a small form',
  description:
    'Ask the person to fill a small form and return their answer as {action, content, via}: in the host\'s own dialog ' +
    'when the host really shows one, otherwise in the Elicitly browser extension. Use it for a few typed values you ' +
    'cannot infer (a version, a choice, a date). The schema is the MCP elicitation subset and is checked before anything ' +
    'is shown. action "pending" (with an elicitationId) means no answer yet: continue with elicit_await and elicit_result.',
  inputSchema: ElicitFormInputSchema,
  outputSchema: ElicitFormOutputSchema,
  refusalHint: 'Fix the named property of requestedSchema and call again; nothing was shown to the person.',
  plan(args) {
    const checked = checkRequestedSchema(args.requestedSchema);
    if (!checked.ok) return checked;
    return {
      ok: true,
      plan: {
        via: args.via ?? 'auto',
        requestedSchema: checked.schema,
        fromHost: (outcome) => {
          if (outcome.action === 'accept') return { action: 'accept', content: outcome.content };
          if (outcome.action === 'error') return { action: 'error', content: null, error: outcome.error };
          return { action: outcome.action, content: null };
        },
        ask: { kind: 'form', message: args.message, requestedSchema: checked.schema, timeoutSeconds: args.timeoutSeconds ?? 3600 },
        unanswered: { action: 'cancel', content: null },
        noAnswerYet: { content: null },
        waitSeconds: args.waitSeconds,
      },
    };
  },
});
