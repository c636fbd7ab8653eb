import { ElicitFormInputSchema, ElicitFormOutputSchema } from '../../../shared/ask-input.js';
import { clamp } from '../../../shared/limits.js';
import { checkRequestedSchema } from '../../../shared/requested-schema.js';
import { runAsk } from '../ask-routing.js';
import { toolError } from '../tool-result.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

export const elicitForm: ToolDefinition = {
  name: 'elicit_form',
  register(server, session) {
    registerTool(server, 
      'elicit_form',
      {
        title: 'Ask for a small form',
        description:
          'Ask the person to fill a small form and return their answer as {action, content, via}: in the host\'s own dialog ' +
          'when the host really shows one, otherwise in the Elicitly browser extension. Use it for a few typed values you ' +
          'cannot infer (a version, a choice, a date). The schema is the MCP elicitation subset and is checked before anything ' +
          'is shown. action "pending" (with an elicitationId) means no answer yet: continue with elicit_await and elicit_result.',
        inputSchema: ElicitFormInputSchema,
        outputSchema: ElicitFormOutputSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        ...appToolMeta(session),
      },
      async (args, ctx) => {
        const checked = checkRequestedSchema(args.requestedSchema);
        if (!checked.ok) return toolError({ code: 'invalid_arguments', issues: checked.issues, hint: 'Fix the named property of requestedSchema and call again; nothing was shown to the person.' });
        return runAsk(ctx, session, {
          via: args.via ?? 'auto',
          host: { tool: 'elicit_form', message: args.message, requestedSchema: checked.schema, timeoutMs: clamp(args.timeoutSeconds, 300, 60, 3600) * 1000 },
          fromHost: (outcome) => {
            if (outcome.action === 'accept') return { action: 'accept', content: outcome.content };
            if (outcome.action === 'error') return { action: 'error', content: null, error: outcome.error };
            return { action: outcome.action, content: null };
          },
          ask: { kind: 'form', message: args.message, requestedSchema: checked.schema, timeoutSeconds: args.timeoutSeconds ?? 3600 },
          fromExtension: (result) => ({ ...result }),
          unanswered: { action: 'cancel', content: null },
          noAnswerYet: { content: null },
          waitSeconds: args.waitSeconds,
        });
      },
    );
  },
};
