// What is declared to hosts that render MCP Apps (`io.modelcontextprotocol/ui`), apart from the app-only tools' shapes
// (app-surface.ts): a server answering `initialize` needs these, and none of the request shapes behind those tools.
// Plain code, no zod: the server's first answers (server/mcp/fast-handshake.ts) decide with it before zod is loaded.

export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
export const REVIEW_APP_URI = 'ui://elicitly/review.html';
/** Result `_meta` key under which a creating tool hands the rendered view its request id and single-use key. */
export const APP_META_KEY = 'io.github.elicitly/app';

/** Whether the client renders MCP Apps: it declared the UI extension with our MIME type. */
export function declaresAppUi(capabilities: unknown): boolean {
  const ui = entry(entry(capabilities, 'extensions'), UI_EXTENSION);
  const mimeTypes = entry(ui, 'mimeTypes');
  return Array.isArray(mimeTypes) && mimeTypes.every((type) => typeof type === 'string') && mimeTypes.includes(APP_MIME_TYPE);
}

/** `value[key]` when value is a plain object (not an array) that has key as its own property. */
function entry(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}
