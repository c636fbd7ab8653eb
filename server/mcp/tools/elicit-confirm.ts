import { ElicitConfirmInputSchema, ElicitConfirmOutputSchema, resolveConfirmInput } from '../../../shared/ask-input.js';
import { confirmRequestedSchema, mapConfirm } from '../../../shared/confirm.js';
import { clamp } from '../../../shared/limits.js';
import { runAsk } from '../ask-routing.js';
import { toolError } from '../tool-result.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

export const elicitConfirm: ToolDefinition = {
  name: 'elicit_confirm',
  register(server, session) {
    registerTool(server, 
      'elicit_confirm',
      {
        title: 'Ask a yes/no question',
        description:
          'Ask the person a yes/no question and get {confirmed, action, via} back. It goes to the host\'s own dialog when the ' +
          'host really shows one, otherwise to the Elicitly browser extension (via says which). confirmed is null when the ' +
          'question was dismissed or failed; action "pending" (with an elicitationId) means the person has not answered yet: ' +
          'continue with elicit_await and elicit_result. For approvals with context or forms that must survive restarts, use elicit_approval.',
        inputSchema: ElicitConfirmInputSchema,
        outputSchema: ElicitConfirmOutputSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        ...appToolMeta(session),
      },
      async (args, ctx) => {
        const input = resolveConfirmInput(args);
        if (!input.ok) return toolError({ code: 'invalid_arguments', issues: input.issues, hint: 'Fix the named field and call again; nothing was shown to the person.' });
        const { question, yes, no } = input;
        return runAsk(ctx, session, {
          via: args.via ?? 'auto',
          host: { tool: 'elicit_confirm', message: question, requestedSchema: confirmRequestedSchema(yes, no), timeoutMs: clamp(args.timeoutSeconds, 300, 60, 3600) * 1000 },
          fromHost: (outcome) => mapConfirm(question, outcome.action === 'accept' ? { action: 'accept', content: outcome.content } : outcome),
          ask: { kind: 'confirm', message: question, labels: { yes, no }, timeoutSeconds: args.timeoutSeconds ?? 3600 },
          fromExtension: (result) => ({ ...result }),
          unanswered: { confirmed: null, action: 'cancel', question },
          noAnswerYet: { confirmed: null, question },
          waitSeconds: args.waitSeconds,
        });
      },
    );
  },
};
