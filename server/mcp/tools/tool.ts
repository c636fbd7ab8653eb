import type { CallToolResult, InputRequiredResult, McpServer, ServerContext, StandardSchemaWithJSON, ToolAnnotations } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { fromZod } from '../../../shared/approval-input.js';
import { clipReason } from '../../../shared/limits.js';
import { log } from '../../log.js';
import type { Session } from '../session.js';
import { toolError, ToolErrorSchema } from '../tool-result.js';

/** One tool = one file exporting a `ToolDefinition`; the registry registers them in name order. */
export interface ToolDefinition {
  name: string;
  /** Only for the review inside the chat: registered when the client renders MCP Apps, hidden from the model there. */
  appOnly?: boolean;
  register: (server: McpServer, session: Session) => void;
}

type ObjectSchema = z.ZodType<Record<string, unknown>>;

export interface ToolConfig<In extends ObjectSchema> {
  title: string;
  description: string;
  inputSchema: In;
  /** What the tool returns when it succeeds; the listed outputSchema also admits its refusals. */
  outputSchema: ObjectSchema;
  /** A refusal shape of this tool's own, besides `ToolErrorSchema` (the app-only tools': the view shows the field). */
  ownRefusal?: ObjectSchema;
  annotations: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

type Handler<In extends ObjectSchema> = (args: z.output<In>, ctx: ServerContext) => CallToolResult | InputRequiredResult | Promise<CallToolResult | InputRequiredResult>;

/** The input schema as listed, its check left to `registerTool`: the SDK's own refusal would be text alone. */
function listedOnly(schema: ObjectSchema): StandardSchemaWithJSON {
  return { '~standard': { version: 1, vendor: 'elicitly', validate: (value) => ({ value }), jsonSchema: schema['~standard'].jsonSchema } };
}

const FIX_ARGUMENTS = 'Fix the named field and call again; the call did nothing.';
const INTERNAL = 'Something in elicitly-companion failed; call again, and report it (elicit_doctor with share: true) if it keeps failing.';

/**
 * Registers a tool so that every result it can give fits what it lists. A v1 SDK client checks `structuredContent`
 * against the outputSchema even on an `isError` result (and throws -32602 when it does not fit), so the listed schema
 * is `anyOf` the tool's result and its refusals; and the refusals the SDK would write itself (arguments the input
 * schema refuses, a handler that throws) carry text alone, so they are written here, as `ToolErrorSchema`.
 */
export function registerTool<In extends ObjectSchema>(server: McpServer, name: string, config: ToolConfig<In>, handler: Handler<In>): void {
  const { inputSchema, outputSchema, ownRefusal, ...rest } = config;
  server.registerTool(
    name,
    { ...rest, inputSchema: listedOnly(inputSchema), outputSchema: z.union([outputSchema, ...(ownRefusal ? [ownRefusal] : []), ToolErrorSchema]) },
    async (args, ctx) => {
      const parsed = inputSchema.safeParse(args);
      if (!parsed.success) return toolError({ code: 'invalid_arguments', issues: fromZod(inputSchema, parsed.error.issues, args), hint: FIX_ARGUMENTS });
      try {
        return await handler(parsed.data, ctx);
      } catch (error) {
        const message = clipReason(error instanceof Error ? error.message : String(error));
        log('error', `${name} failed`, { error: message });
        return toolError({ code: 'internal_error', message, hint: INTERNAL });
      }
    },
  );
}
