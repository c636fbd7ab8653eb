import { randomBytes } from 'node:crypto';
import { MockHttp, MockModelApi, sendEvents, sendJson } from './mock-http.js';

/**
 * The model, played by the test, for a real Codex: the OpenAI Responses API (`POST /v1/responses`, streamed as
 * server-sent events). Like the Messages mock it is stateless: the turn that answers is the number of assistant output
 * groups already in the request's `input`.
 */
export type ResponsesTurn =
  /** A function call; an MCP tool is `{ namespace: "mcp__<server>", name: "<tool>" }` (Codex offers it as a namespace). */
  | { call: { name: string; namespace?: string; arguments: Record<string, unknown> } }
  /** A final message listing every function_call_output the request carried. */
  | { echo: true };

export interface OutputSeen {
  callId: string;
  text: string;
}

const ASSISTANT_ITEMS = new Set(['function_call', 'reasoning', 'local_shell_call', 'custom_tool_call']);

type Item = Record<string, unknown>;

function isRecord(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isAssistant = (item: Item) => ASSISTANT_ITEMS.has(String(item.type)) || (item.type === 'message' && item.role === 'assistant');

function turnIndex(input: readonly Item[]): number {
  let groups = 0;
  let inGroup = false;
  for (const item of input) {
    const assistant = isAssistant(item);
    if (assistant && !inGroup) groups += 1;
    inGroup = assistant;
  }
  return groups;
}

function outputText(item: Item): string {
  const output = item.output;
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  if (isRecord(output) && typeof output.content === 'string') return output.content;
  return JSON.stringify(output);
}

/** The tool outputs after the last assistant item: the answers to the model's last turn. */
function lastOutputs(input: readonly Item[]): OutputSeen[] {
  const found: OutputSeen[] = [];
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!;
    if (isAssistant(item)) break;
    if (String(item.type).endsWith('_call_output')) found.unshift({ callId: String(item.call_id), text: outputText(item) });
  }
  return found;
}

/** Every tool name the request offers, MCP tools as `namespace::tool`. */
function offeredTools(tools: readonly Item[]): Set<string> {
  const names = new Set<string>();
  for (const tool of tools) {
    const name = String(tool.name ?? tool.type);
    names.add(name);
    if (tool.type === 'namespace' && Array.isArray(tool.tools)) for (const sub of tool.tools.filter(isRecord)) names.add(`${name}::${String(sub.name)}`);
  }
  return names;
}

const id = (prefix: string) => prefix + randomBytes(10).toString('hex');

function events(response: Item, output: Item[]): { type: string }[] {
  let n = 0;
  const out: { type: string; [key: string]: unknown }[] = [];
  const push = (event: { type: string; [key: string]: unknown }) => out.push({ ...event, sequence_number: n++ });
  push({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      const part = (item.content as Item[])[0]!;
      push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } });
      push({ type: 'response.content_part.added', item_id: item.id, output_index, content_index: 0, part: { ...part, text: '' } });
      push({ type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta: part.text });
      push({ type: 'response.output_text.done', item_id: item.id, output_index, content_index: 0, text: part.text });
      push({ type: 'response.content_part.done', item_id: item.id, output_index, content_index: 0, part });
    } else {
      push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta: item.arguments });
      push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index, arguments: item.arguments });
    }
    push({ type: 'response.output_item.done', output_index, item });
  });
  push({ type: 'response.completed', response: { ...response, status: 'completed', output } });
  return out;
}

const USAGE = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 };

const message = (text: string): Item => ({ type: 'message', id: id('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });

export class MockResponsesApi extends MockModelApi {
  private constructor(
    http: MockHttp,
    /** Every tool output a main request carried, in order. */
    readonly outputs: readonly OutputSeen[],
  ) {
    super(http);
  }

  static async start(turns: readonly ResponsesTurn[]): Promise<MockResponsesApi> {
    const seen: OutputSeen[] = [];
    const http = await MockHttp.start(({ method, path, body }, res) => {
      if (method === 'GET' && path.endsWith('/models')) {
        sendJson(res, 200, { object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }], models: [] });
        return 'other';
      }
      if (!(method === 'POST' && path.endsWith('/responses') && isRecord(body) && Array.isArray(body.input))) {
        sendJson(res, 404, { error: { message: `mock: no route for ${method} ${path}`, type: 'invalid_request_error' } });
        return 'other';
      }
      const input = body.input.filter(isRecord);
      const turn: ResponsesTurn = turns[turnIndex(input)] ?? { echo: true };
      const offered = offeredTools(Array.isArray(body.tools) ? body.tools.filter(isRecord) : []);
      const wanted = 'call' in turn ? (turn.call.namespace ? `${turn.call.namespace}::${turn.call.name}` : turn.call.name) : null;
      const main = wanted === null ? offered.size > 0 : offered.has(wanted);
      let output: Item[];
      if (!main) output = [message('ok')];
      else {
        const outputs = lastOutputs(input);
        seen.push(...outputs);
        if ('call' in turn) {
          const call: Item = { type: 'function_call', id: id('fc_'), call_id: id('call_mock_'), name: turn.call.name, arguments: JSON.stringify(turn.call.arguments), status: 'completed' };
          if (turn.call.namespace) call.namespace = turn.call.namespace;
          output = [call];
        } else {
          output = [message(`MOCK_ECHO ${outputs.map((o) => `output(${o.callId}): ${o.text}`).join('\n') || '(no output)'}`)];
        }
      }
      const response = { id: id('resp_'), object: 'response', created_at: Math.floor(Date.now() / 1000), model: String(body.model ?? 'mock-model'), output, usage: USAGE };
      if (body.stream === false) sendJson(res, 200, { ...response, status: 'completed' });
      else sendEvents(res, events(response, output));
      return main ? 'main' : 'side';
    });
    return new MockResponsesApi(http, seen);
  }

}
