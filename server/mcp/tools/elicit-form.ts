import * as z from 'zod';
import { clamp } from '../../../shared/limits.js';
import { checkRequestedSchema } from '../../../shared/requested-schema.js';
import { elicitFromHost } from '../host-elicitation.js';
import { invalidArguments, structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

const ElicitFormInputSchema = z.strictObject({
  message: z.string().trim().min(1).max(4000).describe('What the person is asked, shown above the form.'),
  requestedSchema: z
    .record(z.string(), z.unknown())
    .describe('A flat JSON Schema object (MCP elicitation subset): string, number, integer, boolean, single- and multi-select enum properties.'),
  timeoutSeconds: z.number().optional().describe('How long to wait for the answer. Default 300, clamped to 60–3600.'),
});

const ElicitFormOutputSchema = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel', 'error']),
  content: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().optional(),
});

export const elicitForm: ToolDefinition = {
  name: 'elicit_form',
  register(server, session) {
    server.registerTool(
      'elicit_form',
      {
        title: 'Ask for a small form',
        description:
          "Ask the person to fill a small form in the host's own dialog and return their answer as {action, content}. " +
          'Use it for a few typed values you cannot infer (a version, a choice, a date). The schema is the MCP elicitation subset ' +
          'and is checked before anything is shown. For decisions that must survive restarts or need a field-by-field review, ' +
          'use elicit_approval or elicit_proposal instead; run elicit_doctor first in an unfamiliar host.',
        inputSchema: ElicitFormInputSchema,
        outputSchema: ElicitFormOutputSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async (args, ctx) => {
        const checked = checkRequestedSchema(args.requestedSchema);
        if (!checked.ok) return invalidArguments(checked.issues, 'Fix the named property of requestedSchema and call again; nothing was shown to the person.');
        const step = await elicitFromHost(ctx, session, {
          tool: 'elicit_form',
          message: args.message,
          requestedSchema: checked.schema,
          timeoutMs: clamp(args.timeoutSeconds, 300, 60, 3600) * 1000,
        });
        if (!step.done) return step.result;
        const outcome = step.outcome;
        if (outcome.action === 'accept') return structured({ action: 'accept', content: outcome.content });
        if (outcome.action === 'error') return structured({ action: 'error', content: null, error: outcome.error });
        return structured({ action: outcome.action, content: null });
      },
    );
  },
};
