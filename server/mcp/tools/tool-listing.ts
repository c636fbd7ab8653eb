import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { portableSchema } from '../../../shared/schema-portability.js';
import { listedOutputSchema, type Tool } from './tool.js';
import { TOOL_LOADERS } from './tool-loaders.js';

/** What the SDK converts a tool's schemas with (its `JSON_SCHEMA_CONVERSION_TARGET`): the listing must be the same JSON. */
const TARGET = 'draft-2020-12';

/** One tool as `tools/list` shows it, with no zod in it: the JSON Schemas are already converted. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  appOnly: boolean;
  inChat: boolean;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

export function listingOf(tool: Tool): ToolListing {
  const { title, description, annotations, inputSchema } = tool.config;
  return {
    name: tool.name,
    title,
    description,
    annotations,
    appOnly: tool.appOnly === true,
    inChat: tool.inChat === true,
    // In the form every client reads (no `type` arrays, no schema that says nothing): shared/schema-portability.ts.
    inputSchema: portableSchema(inputSchema['~standard'].jsonSchema.input({ target: TARGET })),
    outputSchema: portableSchema(listedOutputSchema(tool.config)['~standard'].jsonSchema.output({ target: TARGET })),
  };
}

/**
 * Every tool's listing, alphabetical (hosts list tools in registration order). Computed here from the definitions, all
 * loaded;
 * the bundle gets this module's value computed at build time instead (scripts/build-server.mjs), so a server answers
 * `tools/list` without loading any tool's definition or building a zod schema for it.
 */
export const TOOL_LISTINGS: readonly ToolListing[] = (
  await Promise.all(
    Object.entries(TOOL_LOADERS).map(async ([name, load]) => {
      const tool = await load();
      if (tool.name !== name) throw new Error(`server/mcp/tools/tool-loaders.ts: the loader named ${name} loads ${tool.name}`);
      return listingOf(tool);
    }),
  )
).sort((a, b) => a.name.localeCompare(b.name));
