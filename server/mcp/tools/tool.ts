import type { McpServer } from '@modelcontextprotocol/server';
import type { Session } from '../session.js';

/** One tool = one file exporting a `ToolDefinition`; the registry registers them in name order. */
export interface ToolDefinition {
  name: string;
  /** Only for the review inside the chat: registered when the client renders MCP Apps, hidden from the model there. */
  appOnly?: boolean;
  register: (server: McpServer, session: Session) => void;
}

