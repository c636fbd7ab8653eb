import type { CallToolResult, InputRequiredResult, McpServer, ServerContext, StandardSchemaWithJSON, ToolAnnotations } from '@modelcontextprotocol/server';
import { isInputRequiredResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { formatIssues, fromZod } from '../../../shared/field-issues.js';
import { clipReason } from '../../../shared/limits.js';
import { log } from '../../log.js';
import { appToolMeta } from '../app/app-result.js';
import type { Session } from '../session.js';
import type { ToolListing } from './tool-listing.js';
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

/** A schema as listed (its JSON Schema converted already), its check left to `registerTool`: the SDK's own refusal would be text alone. */
function listedOnly(json: Record<string, unknown>): StandardSchemaWithJSON {
  return { '~standard': { version: 1, vendor: 'elicitly', validate: (value) => ({ value }), jsonSchema: { input: () => json, output: () => json } } };
}

/**
 * What a tool lists as its outputSchema: its result or one of its refusals. A v1 SDK client checks `structuredContent`
 * against the outputSchema even on an `isError` result (and throws -32602 when it does not fit), so the refusals are in it.
 */
export function listedOutputSchema(config: ToolConfig<ObjectSchema>): ObjectSchema {
  return z.union([config.outputSchema, ...(config.ownRefusal ? [config.ownRefusal] : []), ToolErrorSchema]);
}

const FIX_ARGUMENTS = 'Fix the named field and call again; the call did nothing.';
const INTERNAL = 'Something in elicitly-companion failed; call again, and report it (elicit_doctor with share: true) if it keeps failing.';

/** A loaded tool and its output check, built once per process on the tool's first call. */
interface Loaded {
  tool: Tool;
  output: ObjectSchema;
}

function internalError(name: string, error: unknown): CallToolResult {
  const message = clipReason(error instanceof Error ? error.message : String(error));
  log('error', `${name} failed`, { error: message });
  return toolError({ code: 'internal_error', message, hint: INTERNAL });
}

/**
 * Registers a tool from its listing, so that `tools/list` needs neither its definition nor zod; the definition is
 * loaded on the first call. Every result fits what the tool lists: the refusals the SDK would write itself (arguments
 * the input schema refuses, a handler that throws) carry text alone, so they are written here, as `ToolErrorSchema`;
 * and a success result is checked against the listed outputSchema here, as the SDK would with a zod one.
 */
export function registerTool(server: McpServer, listing: ToolListing, load: () => Promise<Tool>, session: Session): void {
  const meta = listing.appOnly ? appToolMeta(session, 'app') : listing.inChat ? appToolMeta(session) : {};
  let loading: Promise<Loaded> | undefined;
  const loaded = () => (loading ??= load().then((tool) => ({ tool, output: listedOutputSchema(tool.config) })));
  server.registerTool(
    listing.name,
    {
      title: listing.title,
      description: listing.description,
      annotations: listing.annotations,
      ...meta,
      inputSchema: listedOnly(listing.inputSchema),
      outputSchema: listedOnly(listing.outputSchema),
    },
    async (args, ctx) => {
      let answer: ToolAnswer;
      let output: ObjectSchema;
      try {
        const { tool, output: schema } = await loaded();
        output = schema;
        const inputSchema = tool.config.inputSchema;
        const parsed = inputSchema.safeParse(args);
        if (!parsed.success) return toolError({ code: 'invalid_arguments', issues: fromZod(inputSchema, parsed.error.issues, args), hint: FIX_ARGUMENTS });
        answer = await tool.handler(parsed.data, ctx, session);
      } catch (error) {
        return internalError(listing.name, error);
      }
      if (isInputRequiredResult(answer) || answer.isError) return answer;
      const fits = output.safeParse(answer.structuredContent);
      return fits.success ? answer : internalError(listing.name, new Error(`its result does not fit its outputSchema: ${formatIssues(fromZod(output, fits.error.issues, answer.structuredContent))}`));
    },
  );
}
