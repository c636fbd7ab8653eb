import { randomBytes } from 'node:crypto';
import { MockHttp, MockModelApi, sendEvents, sendJson } from './mock-http.js';

/**
 * The model, played by the test, for a real Claude Code: the Anthropic Messages API (`POST /v1/messages`, streamed as
 * server-sent events the way the API streams them). Which scripted turn answers a request is the number of assistant
 * messages already in it, so the mock is stateless: a retry gets the same answer, the next request the next turn.
 * Claude Code runs with ENABLE_TOOL_SEARCH=false so MCP tools come in `tools` directly (no ToolSearch round first).
 */
export type MessagesTurn =
  | { toolUse: { name: string; input: Record<string, unknown> } }
  /** A final text listing every tool_result the request carried: what the model "saw". */
  | { echo: true };

export interface ToolResultSeen {
  toolUseId: string;
  isError: boolean;
  text: string;
}

export const ECHO_PREFIX = 'MOCK_ECHO';

interface Block {
  type: string;
  [key: string]: unknown;
}
interface Message {
  role: string;
  content: string | Block[];
}
interface MessagesBody {
  messages: Message[];
  tools: { name: string }[];
  stream: boolean;
  model: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messagesBody(body: unknown): MessagesBody | null {
  if (!isRecord(body) || !Array.isArray(body.messages)) return null;
  return {
    messages: body.messages.filter(isRecord).map((m) => ({ role: String(m.role), content: typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.filter(isRecord).map((b) => ({ ...b, type: String(b.type) })) : [] })),
    tools: Array.isArray(body.tools) ? body.tools.filter(isRecord).map((t) => ({ name: String(t.name) })) : [],
    stream: body.stream === true,
    model: typeof body.model === 'string' ? body.model : 'claude-mock',
  };
}

function resultText(block: Block): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : JSON.stringify(part))).join('\n');
  return JSON.stringify(content);
}

/** The tool_result blocks after the last assistant message: the answers to the model's last turn. */
export function lastToolResults(messages: readonly Message[]): ToolResultSeen[] {
  const found: ToolResultSeen[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant') break;
    if (typeof message.content === 'string') continue;
    const results = message.content.filter((b) => b.type === 'tool_result');
    found.unshift(...results.map((b) => ({ toolUseId: String(b.tool_use_id), isError: b.is_error === true, text: resultText(b) })));
  }
  return found;
}

const id = (prefix: string) => prefix + randomBytes(12).toString('hex');

function events(model: string, content: Block[], stopReason: string): { type: string }[] {
  const message = { id: id('msg_mock_'), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } };
  const out: { type: string; [key: string]: unknown }[] = [{ type: 'message_start', message }, { type: 'ping' }];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      out.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    out.push({ type: 'content_block_stop', index });
  });
  out.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } });
  out.push({ type: 'message_stop' });
  return out;
}

export class MockMessagesApi extends MockModelApi {
  private constructor(
    http: MockHttp,
    /** Every tool_result a main request carried, in order. */
    readonly toolResults: readonly ToolResultSeen[],
  ) {
    super(http);
  }

  static async start(turns: readonly MessagesTurn[]): Promise<MockMessagesApi> {
    const seen: ToolResultSeen[] = [];
    const http = await MockHttp.start(({ method, path, body }, res) => {
      if (method === 'POST' && path.endsWith('/v1/messages/count_tokens')) {
        sendJson(res, 200, { input_tokens: 10 });
        return 'other';
      }
      const request = method === 'POST' && path.endsWith('/v1/messages') ? messagesBody(body) : null;
      if (!request) {
        sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `mock: no route for ${method} ${path}` } });
        return 'other';
      }
      const index = request.messages.filter((m) => m.role === 'assistant').length;
      const turn: MessagesTurn = turns[index] ?? { echo: true };
      const offered = new Set(request.tools.map((t) => t.name));
      // Title, summary and safety-classifier requests carry no tools (or not the scripted one): they get a plain "ok".
      const main = 'toolUse' in turn ? offered.has(turn.toolUse.name) : offered.size > 0;
      let content: Block[];
      let stopReason = 'end_turn';
      if (!main) content = [{ type: 'text', text: 'ok' }];
      else {
        const results = lastToolResults(request.messages);
        seen.push(...results);
        if ('toolUse' in turn) {
          content = [{ type: 'tool_use', id: id('toolu_mock_'), name: turn.toolUse.name, input: turn.toolUse.input }];
          stopReason = 'tool_use';
        } else {
          const lines = results.map((r) => `tool_result(${r.toolUseId}${r.isError ? ', is_error' : ''}): ${r.text}`);
          content = [{ type: 'text', text: `${ECHO_PREFIX} ${lines.join('\n') || '(no tool_result)'}` }];
        }
      }
      if (request.stream) sendEvents(res, events(request.model, content, stopReason));
      else sendJson(res, 200, { id: id('msg_mock_'), type: 'message', role: 'assistant', model: request.model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } });
      return main ? 'main' : 'side';
    });
    return new MockMessagesApi(http, seen);
  }

}
