// Another team's MCP server, as a stdio fixture for the real hosts: its one tool asks the person for a form (an
// elicitation) and returns what came back, so the model's tool_result shows whether the answer reached this server.
import { McpServer, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';
import { NORTHWIND } from './northwind.js';

serveStdio(() => {
  const server = new McpServer({ name: NORTHWIND.server, version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
  server.registerTool(NORTHWIND.tool, { description: 'Release Northwind after asking the person which version.', inputSchema: z.object({}) }, async (_args, ctx) => {
    // Written for the 2026-07-28 era Claude Code speaks: ask with input_required, read the answer on the retry.
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'version');
    if (answer.kind !== 'elicit') {
      return inputRequired({ inputRequests: { version: inputRequired.elicit({ message: NORTHWIND.message, requestedSchema: NORTHWIND.schema }) } });
    }
    return { content: [{ type: 'text', text: `${NORTHWIND.receivedPrefix} ${JSON.stringify({ action: answer.action, content: answer.content ?? null })}` }] };
  });
  return server;
});
