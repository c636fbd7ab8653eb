import { ElicitSelectionInputSchema, ElicitSelectionOutputSchema, checkSelectionInput, selectedFromHost, selectionRequestedSchema } from '../../../shared/ask-input.js';
import { clamp } from '../../../shared/limits.js';
import { runAsk } from '../ask-routing.js';
import { toolError } from '../tool-result.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

export const elicitSelection: ToolDefinition = {
  name: 'elicit_selection',
  register(server, session) {
    registerTool(server, 
      'elicit_selection',
      {
        title: 'Ask the person to choose',
        description:
          'Ask the person to pick one option (or several, with multiple: true) and get {action, selected, via} back; selected ' +
          'lists the chosen values (one for a single choice) and is null unless accepted. It goes to the host\'s own dialog ' +
          'when the host really shows one, otherwise to the Elicitly browser extension, which also shows each option\'s ' +
          'description. action "pending" (with an elicitationId) means no answer yet: continue with elicit_await and elicit_result.',
        inputSchema: ElicitSelectionInputSchema,
        outputSchema: ElicitSelectionOutputSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        ...appToolMeta(session),
      },
      async (args, ctx) => {
        const checked = checkSelectionInput(args);
        if (!checked.ok) return toolError({ code: 'invalid_arguments', issues: checked.issues, hint: 'Fix the named field and call again; nothing was shown to the person.' });
        const { ask, waitSeconds, via } = checked.value;
        return runAsk(ctx, session, {
          via,
          host: { tool: 'elicit_selection', message: ask.message, requestedSchema: selectionRequestedSchema(ask), timeoutMs: clamp(args.timeoutSeconds, 300, 60, 3600) * 1000 },
          fromHost: (outcome) => {
            if (outcome.action === 'error') return { action: 'error', selected: null, error: outcome.error };
            if (outcome.action !== 'accept') return { action: outcome.action, selected: null };
            const selected = selectedFromHost(ask, outcome.content);
            return selected ? { action: 'accept', selected } : { action: 'error', selected: null, error: 'the host accepted without a valid choice' };
          },
          ask,
          fromExtension: (result) => ({ ...result }),
          unanswered: { action: 'cancel', selected: null },
          noAnswerYet: { selected: null },
          waitSeconds,
        });
      },
    );
  },
};
