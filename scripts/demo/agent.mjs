// The scripted agent: a real MCP client over stdio, as a host runs one, that declares no elicitation capability (so
// every question goes to the extension). Its server process becomes the hub with its first approval-family call.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** elicit_await's window per call: under the ~60 s tool-call limit of common hosts, as an agent would use it. */
const AWAIT_WINDOW_SECONDS = 45;
/** How much of the server's stderr is kept to explain a failure. */
const STDERR_TAIL = 8_000;

export async function startAgent({ serverEntry, env }) {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry],
    env: { ...process.env, ELICITLY_LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  // Read even when nobody looks at it: a full pipe would stall the server.
  transport.stderr?.on('data', (chunk) => (stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL)));
  const client = new Client({ name: 'elicitly-demo-agent', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);

  /** A tool's structured answer; an isError answer becomes an exception naming the tool, unless `allowError`. */
  const call = async (name, args, { timeout = 20_000, signal, allowError = false } = {}) => {
    const result = await client.callTool({ name, arguments: args }, { timeout, ...(signal ? { signal } : {}) });
    const content = result.structuredContent ?? parseText(result);
    if (result.isError && !allowError) throw new Error(`${name} answered an error: ${JSON.stringify(content)}`);
    return { content, isError: Boolean(result.isError) };
  };

  return {
    stderr: () => stderr,
    /** Makes this process the hub. The made-up id answers not_found; any other error says why there is no hub. */
    async becomeHub() {
      const { content, isError } = await call('elicit_status', { elicitationId: 'el_demo_warmup' }, { allowError: true, timeout: 30_000 });
      if (isError && content?.error !== 'not_found') throw new Error(`no hub: ${content?.message ?? JSON.stringify(content)}`);
    },
    /** Files one request and returns its id and deadline. */
    async file(request) {
      const { content } = await call(request.tool, request.args);
      if (typeof content?.elicitationId !== 'string') throw new Error(`${request.tool} returned no elicitationId: ${JSON.stringify(content)}`);
      return { ...request, message: request.args.message, elicitationId: content.elicitationId, expiresAt: Date.parse(content.expiresAt) };
    },
    /**
     * Waits for the person, one elicit_await window after another, until the request leaves pending or `deadline`
     * (epoch ms) passes; then reads the decision with elicit_result and returns its envelope.
     */
    async decision(filed, { deadline, signal }) {
      let status = 'pending';
      while (status === 'pending') {
        const left = Math.ceil((deadline - Date.now()) / 1000);
        if (left <= 0) throw new Error(`no decision on "${filed.label}" (${filed.elicitationId}) in time`);
        const waitSeconds = Math.min(AWAIT_WINDOW_SECONDS, left);
        ({ status } = (await call('elicit_await', { elicitationId: filed.elicitationId, waitSeconds }, { timeout: (waitSeconds + 15) * 1000, signal })).content);
      }
      // An expired or withdrawn request answers isError here; it is still the envelope the agent gets.
      const { content, isError } = await call('elicit_result', { elicitationId: filed.elicitationId }, { signal, allowError: true });
      return { status, envelope: content, isError };
    },
    /** Withdraws a request nobody decided, so a kept state dir does not show it again next time. */
    async withdraw(filed) {
      await call('elicit_cancel', { elicitationId: filed.elicitationId }, { allowError: true, timeout: 5_000 });
    },
    /** Ends the server process, and with it the hub. */
    async close() {
      await client.close().catch(() => undefined);
    },
  };
}

function parseText(result) {
  const text = result.content?.find((c) => c.type === 'text')?.text;
  try {
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return text;
  }
}
