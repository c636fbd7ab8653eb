import type { ToolAnnotations } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { answerResult, ElicitationIdSchema } from './approval-answers.js';
import { defineTool, type ObjectSchema, type Tool } from './tool.js';

const IdInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });

interface IdToolSpec {
  name: string;
  title: string;
  description: string;
  /** The approval call it makes with the id. */
  method: 'status' | 'result' | 'cancel';
  outputSchema: ObjectSchema;
  annotations: ToolAnnotations;
}

/** A tool that takes one elicitationId and answers what the approval service says of it (elicit_status, _result, _cancel). */
export function idTool(spec: IdToolSpec): Tool<typeof IdInputSchema> {
  const { name, method, ...config } = spec;
  return defineTool({
    name,
    config: { ...config, inputSchema: IdInputSchema },
    handler: async (args, ctx, session) => answerResult(await session.approvals.call(method, { id: args.elicitationId }, ctx.mcpReq.signal), session.retentionDays),
  });
}
