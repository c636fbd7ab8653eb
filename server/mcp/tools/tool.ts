import type { McpServer } from '@modelcontextprotocol/server';
import type { Session } from '../session.js';

/** One tool = one file exporting a `ToolDefinition`; the registry registers them in name order. */
export interface ToolDefinition {
  name: string;
  register: (server: McpServer, session: Session) => void;
}

