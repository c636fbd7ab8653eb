import * as z from 'zod';
import { confirmRequestedSchema, mapConfirm } from '../../../shared/confirm.js';
import { elicitFromHost } from '../host-elicitation.js';
import { structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

const Label = z.string().trim().min(1).max(40);

const ElicitConfirmInputSchema = z.strictObject({
  question: z.string().trim().min(1).max(2000).describe('The yes/no question, phrased so that "yes" means go ahead.'),
  yesLabel: Label.default('Yes').describe('Text of the "yes" option, 1–40 characters (localize it: "Sí", "Oui").'),
  noLabel: Label.default('No').describe('Text of the "no" option, 1–40 characters.'),
});

const ElicitConfirmOutputSchema = z.looseObject({
  confirmed: z.boolean().nullable(),
  action: z.enum(['accept', 'decline', 'cancel']).optional(),
  question: z.string().optional(),
  error: z.string().optional(),
});

/** Five minutes: long enough for a person at the keyboard, short of most hosts' tool-call limits. */
const CONFIRM_TIMEOUT_MS = 300_000;

export const elicitConfirm: ToolDefinition = {
  name: 'elicit_confirm',
  register(server, session) {
    server.registerTool(
      'elicit_confirm',
      {
        title: 'Ask a yes/no question',
        description:
          "Ask the person a yes/no question in the host's own dialog and get {confirmed, action} back. Use it before a step " +
          'that needs a quick human go-ahead. confirmed is null when the dialog was dismissed or failed. For approvals that ' +
          'must survive restarts, use elicit_approval; run elicit_doctor first in an unfamiliar host.',
        inputSchema: ElicitConfirmInputSchema,
        outputSchema: ElicitConfirmOutputSchema,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async (args, ctx) => {
        const step = await elicitFromHost(ctx, session, {
          tool: 'elicit_confirm',
          message: args.question,
          requestedSchema: confirmRequestedSchema(args.yesLabel, args.noLabel),
          timeoutMs: CONFIRM_TIMEOUT_MS,
        });
        if (!step.done) return step.result;
        const outcome = step.outcome;
        const answer = outcome.action === 'accept' ? { action: 'accept' as const, content: outcome.content } : outcome;
        return structured(mapConfirm(args.question, answer));
      },
    );
  },
};
