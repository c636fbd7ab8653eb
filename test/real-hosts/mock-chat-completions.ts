import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { MockHttp, MockModelApi, sendJson } from './mock-http.js';

/**
 * The model, played by the test, for hosts that speak OpenAI Chat Completions (GitHub Copilot CLI with its own provider
 * settings, OpenCode through `@ai-sdk/openai-compatible`): `POST /v1/chat/completions`, streamed as server-sent
 * `chat.completion.chunk` lines or answered as one `chat.completion`. Like the other mocks it is stateless: the turn that
 * answers a main request is the number of assistant messages already in its `messages`.
 *
 * A request that offers no tools is a side request (OpenCode's session title, for one): it gets a short plain text.
 * `GET /v1/models` lists the model ids a client may ask for.
 */
export type ChatTurn =
  /** A tool call; the shell tool of both hosts is `{ name: "bash", arguments: { command, description } }`. */
  | { call: { name: string; arguments: Record<string, unknown> } }
  /** A final text listing every tool message the request carried after the last assistant message: what the model "saw". */
  | { echo: true };

export interface ToolResultSeen {
  toolCallId: string;
  /** The tool message's content, verbatim as the model was told (text parts joined by newlines). */
  content: string;
}

export const ECHO_PREFIX = 'MOCK_ECHO';

/** The side requests' answer (a session title, a summary): short and plain. */
export const SIDE_ANSWER = 'Mock session';

/** The ids `GET /v1/models` lists; a request for another model is answered all the same. */
export const MOCK_MODELS = ['gpt-4.1', 'mock-model'] as const;

type Item = Record<string, unknown>;

function isRecord(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messagesOf(body: unknown): Item[] | null {
  if (!isRecord(body) || !Array.isArray(body.messages)) return null;
  return body.messages.filter(isRecord);
}

/** Every function name the request offers (`tools[].function.name`). */
export function offeredTools(body: unknown): string[] {
  if (!isRecord(body) || !Array.isArray(body.tools)) return [];
  return body.tools.filter(isRecord).map((tool) => (isRecord(tool.function) ? String(tool.function.name) : String(tool.name ?? tool.type)));
}

/** A message's content as text: a string as is, content parts by their `text`, anything else as JSON. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  if (content === undefined || content === null) return '';
  return JSON.stringify(content);
}

function toolResult(message: Item): ToolResultSeen {
  return { toolCallId: String(message.tool_call_id ?? ''), content: contentText(message.content) };
}

/** The tool messages after the last assistant message: the answers to the model's last turn. */
export function lastToolResults(messages: readonly Item[]): ToolResultSeen[] {
  const found: ToolResultSeen[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant') break;
    if (message.role === 'tool') found.unshift(toolResult(message));
  }
  return found;
}

const id = (prefix: string) => prefix + randomBytes(10).toString('hex');
const USAGE = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };

/** What the assistant says this turn: either one tool call or a text. */
type Reply = { kind: 'call'; call: { id: string; name: string; arguments: string } } | { kind: 'text'; text: string };

function completion(model: string, reply: Reply): Item {
  const message =
    reply.kind === 'call'
      ? { role: 'assistant', content: null, tool_calls: [{ id: reply.call.id, type: 'function', function: { name: reply.call.name, arguments: reply.call.arguments } }] }
      : { role: 'assistant', content: reply.text };
  return {
    id: id('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.kind === 'call' ? 'tool_calls' : 'stop' }],
    usage: USAGE,
  };
}

/** The stream: a role delta, the call (whole, index 0) or the text, the finish reason, the usage chunk if asked, `[DONE]`. */
function chunks(model: string, reply: Reply, includeUsage: boolean): Item[] {
  const base = { id: id('chatcmpl-'), object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const choice = (delta: Item, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const out: Item[] = [];
  if (reply.kind === 'call') {
    out.push(choice({ role: 'assistant', content: null }, null));
    out.push(choice({ tool_calls: [{ index: 0, id: reply.call.id, type: 'function', function: { name: reply.call.name, arguments: reply.call.arguments } }] }, null));
    out.push(choice({}, 'tool_calls'));
  } else {
    out.push(choice({ role: 'assistant', content: '' }, null));
    out.push(choice({ content: reply.text }, null));
    out.push(choice({}, 'stop'));
  }
  if (includeUsage) out.push({ ...base, choices: [], usage: USAGE });
  return out;
}

function sendStream(res: ServerResponse, items: readonly Item[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const item of items) res.write(`data: ${JSON.stringify(item)}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

function answer(res: ServerResponse, body: Item, model: string, reply: Reply): void {
  if (body.stream === true) sendStream(res, chunks(model, reply, isRecord(body.stream_options) && body.stream_options.include_usage === true));
  else sendJson(res, 200, completion(model, reply));
}

export class MockChatCompletions extends MockModelApi {
  private constructor(
    http: MockHttp,
    /** Every tool message the main requests carried, in order, once per tool_call_id. */
    readonly toolResults: readonly ToolResultSeen[],
  ) {
    super(http);
  }

  /** Shortcut: one call of `tool` (default `bash`) with `{command, description}`, then the echo. */
  static shell(command: string, tool = 'bash'): Promise<MockChatCompletions> {
    return MockChatCompletions.start([{ call: { name: tool, arguments: { command, description: 'mock: run a command' } } }, { echo: true }]);
  }

  static async start(turns: readonly ChatTurn[]): Promise<MockChatCompletions> {
    const seen: ToolResultSeen[] = [];
    const seenIds = new Set<string>();
    const http = await MockHttp.start(({ method, path, body }, res) => {
      if (method === 'GET' && path.endsWith('/models')) {
        const created = Math.floor(Date.now() / 1000);
        sendJson(res, 200, { object: 'list', data: MOCK_MODELS.map((model) => ({ id: model, object: 'model', created, owned_by: 'mock' })) });
        return 'other';
      }
      const messages = messagesOf(body);
      if (method !== 'POST' || !path.endsWith('/chat/completions') || !isRecord(body) || !messages) {
        sendJson(res, 404, { error: { message: `mock: no route for ${method} ${path}`, type: 'invalid_request_error', code: 'not_found' } });
        return 'other';
      }
      const model = typeof body.model === 'string' ? body.model : 'mock-model';
      if (offeredTools(body).length === 0) {
        answer(res, body, model, { kind: 'text', text: SIDE_ANSWER });
        return 'side';
      }
      for (const message of messages.filter((m) => m.role === 'tool')) {
        const result = toolResult(message);
        if (seenIds.has(result.toolCallId)) continue;
        seenIds.add(result.toolCallId);
        seen.push(result);
      }
      const turn: ChatTurn = turns[messages.filter((m) => m.role === 'assistant').length] ?? { echo: true };
      if ('call' in turn) {
        answer(res, body, model, { kind: 'call', call: { id: id('call_'), name: turn.call.name, arguments: JSON.stringify(turn.call.arguments) } });
      } else {
        const results = lastToolResults(messages);
        answer(res, body, model, { kind: 'text', text: `${ECHO_PREFIX} ${results.map((r) => r.content).join('\n') || '(no tool message)'}` });
      }
      return 'main';
    });
    return new MockChatCompletions(http, seen);
  }

  /** The base URL clients append `/chat/completions` to. */
  override get url(): string {
    return `${this.http.url}/v1`;
  }

}
