import * as z from 'zod';
import { AnsweredViaSchema, ViaSchema } from '../../../shared/ask-input.js';
import { confirmRequestedSchema, mapConfirm } from '../../../shared/confirm.js';
import { clamp } from '../../../shared/limits.js';
import type { FieldIssue } from '../../../shared/requested-schema.js';
import { runAsk } from '../ask-routing.js';
import { invalidArguments } from '../tool-result.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

const Label = z.string().trim().min(1).max(40);
const Question = z.string().trim().min(1).max(2000);

const ElicitConfirmInputSchema = z.strictObject({
  question: Question.optional().describe('The yes/no question, phrased so that "yes" means go ahead. Required (or `message`).'),
  yesLabel: Label.optional().describe('Text of the "yes" option, 1–40 characters (localize it: "Sí", "Oui"). Default "Yes".'),
  noLabel: Label.optional().describe('Text of the "no" option, 1–40 characters. Default "No".'),
  message: Question.optional().describe('The same as `question`, in the public Elicitly product\'s shape (with `labels`).'),
  labels: z.strictObject({ ok: Label.optional(), cancel: Label.optional() }).optional().describe('The same as yesLabel/noLabel, in the public product\'s shape.'),
  via: ViaSchema.optional().describe('"auto" (default): the host\'s dialog when it really shows one, else the Elicitly extension. "host" or "extension" force one.'),
  waitSeconds: z.number().optional().describe('How long an extension-routed question waits in this call. Default 50, clamped to 1–600; then "pending".'),
  timeoutSeconds: z.number().optional().describe('How long the person has: the host dialog waits this long (default 300, 60–3600); an extension request stays answerable this long (default 3600, 60–86400).'),
});
type ConfirmInput = z.infer<typeof ElicitConfirmInputSchema>;

const ElicitConfirmOutputSchema = z.looseObject({
  confirmed: z.boolean().nullable(),
  action: z.enum(['accept', 'decline', 'cancel', 'pending']).optional(),
  question: z.string().optional(),
  error: z.string().optional(),
  next: z.string().optional(),
  via: AnsweredViaSchema.optional(),
});

/**
 * Seed 000's names and the public product's (`message`, `labels.ok/cancel`) are both accepted; where both name the same
 * thing the seed's win. Taking the question from one and the labels from the other is refused: a caller doing that is
 * confused about which shape it speaks.
 */
export function resolveConfirmInput(args: ConfirmInput): { ok: true; question: string; yes: string; no: string } | { ok: false; issues: FieldIssue[] } {
  const question = args.question ?? args.message;
  if (question === undefined) return { ok: false, issues: [{ path: 'question', rule: 'missing', message: 'question: is required (or `message`): the yes/no question to ask' }] };
  const seedLabels = args.yesLabel !== undefined || args.noLabel !== undefined;
  if (args.question !== undefined && args.message === undefined && args.labels !== undefined && !seedLabels) {
    return { ok: false, issues: [{ path: 'labels', rule: 'mixed_shapes', message: 'labels: belongs with `message` (the public product\'s shape); with `question`, use yesLabel and noLabel' }] };
  }
  if (args.message !== undefined && args.question === undefined && seedLabels && args.labels === undefined) {
    const path = args.yesLabel !== undefined ? 'yesLabel' : 'noLabel';
    return { ok: false, issues: [{ path, rule: 'mixed_shapes', message: `${path}: belongs with \`question\` (seed 000's shape); with \`message\`, use labels.ok and labels.cancel` }] };
  }
  const yes = args.yesLabel ?? (seedLabels ? undefined : args.labels?.ok) ?? 'Yes';
  const no = args.noLabel ?? (seedLabels ? undefined : args.labels?.cancel) ?? 'No';
  return { ok: true, question, yes, no };
}

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
        if (!input.ok) return invalidArguments(input.issues, 'Fix the named field and call again; nothing was shown to the person.');
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
