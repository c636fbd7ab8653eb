// What is declared to hosts that render MCP Apps (`io.modelcontextprotocol/ui`), apart from the app-only tools' shapes
// (app-surface.ts): a server answering `initialize` needs these, and none of the request shapes behind those tools.
import * as z from 'zod';

export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
export const REVIEW_APP_URI = 'ui://elicitly/review.html';
/** Result `_meta` key under which a creating tool hands the rendered view its request id and single-use key. */
export const APP_META_KEY = 'io.github.elicitly/app';

/** Whether the client renders MCP Apps: it declared the UI extension with our MIME type. */
export function declaresAppUi(capabilities: unknown): boolean {
  const parsed = z.looseObject({ extensions: z.looseObject({ [UI_EXTENSION]: z.looseObject({ mimeTypes: z.array(z.string()) }) }) }).safeParse(capabilities);
  return parsed.success && parsed.data.extensions[UI_EXTENSION].mimeTypes.includes(APP_MIME_TYPE);
}
