import type * as z from 'zod';
import { clamp } from '../../../shared/limits.js';
import type { FieldIssue } from '../../../shared/field-issues.js';
import type { RequestedSchema } from '../../../shared/requested-schema.js';
import { runAsk, type AskSpec } from '../ask-routing.js';
import { toolError } from '../tool-result.js';
import { defineTool, type Tool } from './tool.js';

type AskInputSchema = z.ZodType<Record<string, unknown> & { timeoutSeconds?: number }>;

/** An ask as its tool plans it from the arguments: everything `runAsk` needs but the dialog's name and timeout. */
export type AskPlan = Omit<AskSpec, 'host'> & { requestedSchema: RequestedSchema };

/** What differs between elicit_confirm, elicit_form and elicit_selection. */
interface AskToolSpec<In extends AskInputSchema> {
  name: string;
  title: string;
  description: string;
  inputSchema: In;
  outputSchema: z.ZodType<Record<string, unknown>>;
  /** The tool's own checks of its arguments, past the input schema, and the ask they make. */
  plan(args: z.output<In>): { ok: true; plan: AskPlan } | { ok: false; issues: FieldIssue[] };
  /** What to do when `plan` refuses the arguments. */
  refusalHint?: string;
}

const FIX_AND_ASK = 'Fix the named field and call again; nothing was shown to the person.';

/** An ask tool: checked, then asked where it can reach the person (`runAsk`), shown in the chat when the client renders apps. */
export function defineAskTool<In extends AskInputSchema>(spec: AskToolSpec<In>): Tool<In> {
  const { name, title, description, inputSchema, outputSchema } = spec;
  return defineTool({
    name,
    inChat: true,
    config: { title, description, inputSchema, outputSchema, annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } },
    handler(args, ctx, session) {
      const planned = spec.plan(args);
      if (!planned.ok) return toolError({ code: 'invalid_arguments', issues: planned.issues, hint: spec.refusalHint ?? FIX_AND_ASK });
      const { requestedSchema, ...plan } = planned.plan;
      const timeoutMs = clamp(args.timeoutSeconds, 300, 60, 3600) * 1000;
      return runAsk(ctx, session, { ...plan, host: { tool: name, message: plan.ask.message, requestedSchema, timeoutMs } });
    },
  });
}
