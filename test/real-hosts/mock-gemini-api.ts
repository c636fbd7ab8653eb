import type { ServerResponse } from 'node:http';
import { MockHttp, MockModelApi, sendJson } from './mock-http.js';

/**
 * The model, played by the test, for a real Gemini CLI: the Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`,
 * streamed as server-sent `data:` lines, for the conversation; `POST …:generateContent` for its side calls). Like the other
 * mocks it is stateless: the turn that answers a main request is the number of model contents already in it.
 *
 * The side calls carry no tools: the model router (it wants `{complexity_reasoning, complexity_score}` and picks the main
 * model from it) and, in some versions, a next-speaker check (`{reasoning, next_speaker}`). One JSON answer holds every
 * field either asks for; the CLI's parsers keep the ones they know.
 */
export type GeminiTurn =
  /** A function call; the shell tool is `{ name: "run_shell_command", args: { command } }`. */
  | { call: { name: string; args: Record<string, unknown> } }
  /** A final text listing every functionResponse the request carried: what the model "saw". */
  | { echo: true };

export interface FunctionResponseSeen {
  name: string;
  /** The call id the CLI gave the function call (the mock sends none; the CLI makes one up). */
  id: string | undefined;
  /** `{output}` when the tool ran, `{error}` when it was refused or failed: verbatim, as the model was told. */
  response: unknown;
  /** `response.output ?? response.error`, or the whole response as JSON. */
  text: string;
}

export const ECHO_PREFIX = 'MOCK_ECHO';

/** The side calls' answer: the router's fields (a low score picks the flash model) and the next-speaker check's. */
export const SIDE_ANSWER = { complexity_reasoning: 'mock: a simple task', complexity_score: 10, reasoning: 'mock: the turn is complete', next_speaker: 'user' };

type Item = Record<string, unknown>;

function isRecord(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Content {
  role: string;
  parts: Item[];
}

function contentsOf(body: unknown): Content[] | null {
  if (!isRecord(body) || !Array.isArray(body.contents)) return null;
  return body.contents.filter(isRecord).map((c) => ({ role: String(c.role ?? 'user'), parts: Array.isArray(c.parts) ? c.parts.filter(isRecord) : [] }));
}

/** Every function name the request offers (`tools[].functionDeclarations[].name`). */
export function offeredFunctions(body: unknown): string[] {
  if (!isRecord(body) || !Array.isArray(body.tools)) return [];
  return body.tools.filter(isRecord).flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isRecord).map((d) => String(d.name)) : []));
}

function responseText(response: unknown): string {
  if (isRecord(response)) {
    const value = response.output ?? response.error;
    if (typeof value === 'string') return value;
  }
  return JSON.stringify(response);
}

/** The functionResponse parts after the last model content: the answers to the model's last turn. */
export function lastFunctionResponses(contents: readonly Content[]): FunctionResponseSeen[] {
  const found: FunctionResponseSeen[] = [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i]!;
    if (content.role === 'model') break;
    const responses = content.parts.map((p) => p.functionResponse).filter(isRecord);
    found.unshift(...responses.map((r) => ({ name: String(r.name), id: typeof r.id === 'string' ? r.id : undefined, response: r.response, text: responseText(r.response) })));
  }
  return found;
}

/** `/v1beta/models/gemini-2.5-flash:streamGenerateContent` → `{ model: "gemini-2.5-flash", method: "streamGenerateContent" }`. */
function modelCall(path: string): { model: string; method: string } | null {
  const match = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(path);
  return match ? { model: decodeURIComponent(match[1]!), method: match[2]! } : null;
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 };

function candidateResponse(model: string, parts: Item[]): Item {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE, modelVersion: model, responseId: `mock-${Date.now().toString(36)}` };
}

/** The Gemini API's stream: one `data:` line per GenerateContentResponse, no `event:` line. */
function sendStream(res: ServerResponse, chunks: readonly Item[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  res.end();
}

export class MockGeminiApi extends MockModelApi {
  private constructor(
    http: MockHttp,
    /** Every functionResponse a main request carried, in order. */
    readonly functionResponses: readonly FunctionResponseSeen[],
  ) {
    super(http);
  }

  /** Default script: one shell call running `command`, then the echo. */
  static shell(command: string): Promise<MockGeminiApi> {
    return MockGeminiApi.start([{ call: { name: 'run_shell_command', args: { command } } }, { echo: true }]);
  }

  static async start(turns: readonly GeminiTurn[]): Promise<MockGeminiApi> {
    const seen: FunctionResponseSeen[] = [];
    const http = await MockHttp.start(({ method, path, body }, res) => {
      const call = method === 'POST' ? modelCall(path) : null;
      const contents = contentsOf(body);
      if (call?.method === 'countTokens') {
        sendJson(res, 200, { totalTokens: 10 });
        return 'other';
      }
      if (!call || !contents || (call.method !== 'streamGenerateContent' && call.method !== 'generateContent')) {
        sendJson(res, 404, { error: { code: 404, message: `mock: no route for ${method} ${path}`, status: 'NOT_FOUND' } });
        return 'other';
      }
      // Only the conversation is streamed and offers tools; a side call gets the JSON every side call can parse.
      const main = call.method === 'streamGenerateContent' && offeredFunctions(body).length > 0;
      if (!main) {
        const answer = candidateResponse(call.model, [{ text: JSON.stringify(SIDE_ANSWER) }]);
        if (call.method === 'streamGenerateContent') sendStream(res, [answer]);
        else sendJson(res, 200, answer);
        return 'side';
      }
      const responses = lastFunctionResponses(contents);
      seen.push(...responses);
      const turn: GeminiTurn = turns[contents.filter((c) => c.role === 'model').length] ?? { echo: true };
      const parts: Item[] =
        'call' in turn
          ? [{ functionCall: { name: turn.call.name, args: turn.call.args } }]
          : [{ text: `${ECHO_PREFIX} ${responses.map((r) => `functionResponse(${r.name}): ${JSON.stringify(r.response)}`).join('\n') || '(no functionResponse)'}` }];
      sendStream(res, [candidateResponse(call.model, parts)]);
      return 'main';
    });
    return new MockGeminiApi(http, seen);
  }

}
