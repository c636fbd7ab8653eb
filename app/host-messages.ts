// What the host sends the view (MCP Apps, JSON-RPC 2.0 over postMessage), checked before anything reads it. Only what
// the view uses is held to a shape; anything else a host adds passes through unread. The SDK's own schemas for these
// are the MCP protocol's whole set, which the view would carry for the handful of messages it reads.
import * as z from 'zod';

const RequestIdSchema = z.union([z.string(), z.number().int()]);
const ParamsSchema = z.looseObject({});

/** One JSON-RPC message: a request, a notification, a result or an error (tried in that order). */
export const HostMessageSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, method: z.string(), params: ParamsSchema.optional() }),
  z.object({ jsonrpc: z.literal('2.0'), method: z.string(), params: ParamsSchema.optional() }),
  z.object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, result: ParamsSchema }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: RequestIdSchema.optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

export const DisplayModeSchema = z.enum(['inline', 'fullscreen', 'pip']);
export type DisplayMode = z.infer<typeof DisplayModeSchema>;

/**
 * The host's context, as far as the view reads it: theme, display modes and style variables (any `--` custom property
 * the host names; app.css reads those it knows). A partial one arrives with each change.
 */
export const HostContextSchema = z.looseObject({
  theme: z.enum(['light', 'dark']).optional(),
  displayMode: DisplayModeSchema.optional(),
  availableDisplayModes: z.array(DisplayModeSchema).optional(),
  styles: z.object({ variables: z.record(z.string(), z.string().optional()).optional() }).optional(),
});
export type HostContext = z.infer<typeof HostContextSchema>;

/** The host's answer to `ui/initialize`. */
export const InitializeResultSchema = z.looseObject({
  protocolVersion: z.string(),
  hostInfo: z.looseObject({ name: z.string(), version: z.string() }),
  hostCapabilities: ParamsSchema,
  hostContext: HostContextSchema,
});

/** A content item of a tool result: text items carry their text; the view reads no other kind. */
const ContentItemSchema = z.looseObject({ type: z.string(), text: z.string().optional() })
  .refine((item) => item.type !== 'text' || item.text !== undefined, 'a text item without its text');

/** A tools/call result, as the host hands the view its tool's result and the app-only tools' results. */
export const CallToolResultSchema = z.looseObject({
  content: z.array(ContentItemSchema).default([]),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type CallToolResult = z.infer<typeof CallToolResultSchema>;

export const ToolInputParamsSchema = z.looseObject({ arguments: z.record(z.string(), z.unknown()).optional() });
export const ToolCancelledParamsSchema = z.looseObject({ reason: z.string().optional() });
export const DisplayModeResultSchema = z.looseObject({ mode: DisplayModeSchema });
export const ProgressParamsSchema = z.looseObject({ progressToken: RequestIdSchema });
