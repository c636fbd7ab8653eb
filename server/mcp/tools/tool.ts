import type { CallToolResult, InputRequiredResult, McpServer, ServerContext, StandardSchemaWithJSON, ToolAnnotations } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { fromZod } from '../../../shared/field-issues.js';
import { clipReason } from '../../../shared/limits.js';
import { log } from '../../log.js';
import { appToolMeta } from '../app/app-result.js';
import type { Session } from '../session.js';
import { toolError, ToolErrorSchema } from '../tool-result.js';

export type ObjectSchema = z.ZodType<Record<string, unknown>>;

export interface ToolConfig<In extends ObjectSchema> {
  title: string;
  description: string;
  inputSchema: In;
  /** What the tool returns when it succeeds; the listed outputSchema also admits its refusals. */
  outputSchema: ObjectSchema;
  /** A refusal shape of this tool's own, besides `ToolErrorSchema` (the app-only tools': the view shows the field). */
  ownRefusal?: ObjectSchema;
  annotations: ToolAnnotations;
}

type ToolAnswer = CallToolResult | InputRequiredResult;

/** One tool as data: what it lists and what it does with one connection's session. `registerTools` registers them. */
export interface Tool<In extends ObjectSchema = ObjectSchema> {
  name: string;
  /** Only for the review inside the chat: registered when the client renders MCP Apps, hidden from the model there. */
  appOnly?: boolean;
  /** Its result can be shown in the review inside the chat: it points at the review resource when the client renders apps. */
  inChat?: boolean;
  config: ToolConfig<In>;
  // A method, not a property: so a tool of any input schema is a `Tool`, and it is only ever called with its own schema's output.
  handler(args: z.output<In>, ctx: ServerContext, session: Session): ToolAnswer | Promise<ToolAnswer>;
}

/** Infers the handler's arguments from the input schema. */
export function defineTool<In extends ObjectSchema>(tool: Tool<In>): Tool<In> {
  return tool;
}

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
export function registerTool(server: McpServer, tool: Tool, session: Session): void {
  const { inputSchema, outputSchema, ownRefusal, ...rest } = tool.config;
  const meta = tool.appOnly ? appToolMeta(session, 'app') : tool.inChat ? appToolMeta(session) : {};
  server.registerTool(
    tool.name,
    { ...rest, ...meta, inputSchema: listedOnly(inputSchema), outputSchema: z.union([outputSchema, ...(ownRefusal ? [ownRefusal] : []), ToolErrorSchema]) },
    async (args, ctx) => {
      const parsed = inputSchema.safeParse(args);
      if (!parsed.success) return toolError({ code: 'invalid_arguments', issues: fromZod(inputSchema, parsed.error.issues, args), hint: FIX_ARGUMENTS });
      try {
        return await tool.handler(parsed.data, ctx, session);
      } catch (error) {
        const message = clipReason(error instanceof Error ? error.message : String(error));
        log('error', `${tool.name} failed`, { error: message });
        return toolError({ code: 'internal_error', message, hint: INTERNAL });
      }
    },
  );
}
