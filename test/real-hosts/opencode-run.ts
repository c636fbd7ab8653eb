import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freeLoopbackPort } from './companion.js';
import { OPENCODE } from './host-bins.js';
import { BASE_ENV, makeSandbox, type Sandbox } from './host-process.js';

/** The plugin package OpenCode wants beside its plugins: the version of the OpenCode the tests drive. */
const OPENCODE_VERSION = OPENCODE.package.slice(OPENCODE.package.lastIndexOf('@') + 1);

/** The provider and model the sandbox's config defines: the mock, through `@ai-sdk/openai-compatible` (bundled). */
export const MOCK_MODEL = { providerID: 'mock', modelID: 'mock-model' } as const;

export interface OpencodeSandbox extends Sandbox {
  /** $HOME/.config/opencode: opencode.json, the pre-seeded plugin dependencies, plugin/. */
  configDir: string;
  /** $HOME/.config/opencode/plugin: every `*.js` there is loaded as a plugin (the first time a directory is used). */
  pluginDir: string;
}

/**
 * On start OpenCode runs an npm install of `@opencode-ai/plugin` into every config dir (~8 s with the registry, ~70 s of
 * retries without one). It skips that when the dir already has `node_modules/` and its `package-lock.json` root lists
 * every dependency of its `package.json` plus `@opencode-ai/plugin` (or when the dir is not writable). The plugins these
 * tests load import nothing, so an empty `node_modules` and a lock that names the package are enough.
 */
export function seedPluginDependencies(configDir: string): void {
  const dependencies = { '@opencode-ai/plugin': OPENCODE_VERSION };
  mkdirSync(join(configDir, 'node_modules'), { recursive: true });
  writeFileSync(join(configDir, 'package.json'), JSON.stringify({ dependencies }, null, 2));
  writeFileSync(join(configDir, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, requires: true, packages: { '': { dependencies } } }, null, 2));
}

/**
 * A throw-away HOME whose global config makes OpenCode talk to the mock only: provider `mock` at `apiUrl` (the mock's
 * `/v1`), `mock/mock-model` for the main and the small (title) model, no auto update, no sharing, and bash asking for
 * permission (it is allowed by default). `plugins` are written to the plugin dir by file name; `config` is merged over
 * the top level.
 */
export function opencodeSandbox(options: {
  apiUrl: string;
  permission?: unknown;
  plugins?: Record<string, string>;
  config?: Record<string, unknown>;
  /** Leave the config dir bare, so OpenCode installs its plugin package (slow; needs the registry). */
  installPluginDependencies?: boolean;
}): OpencodeSandbox {
  const base = makeSandbox('opencode');
  const configDir = join(base.home, '.config', 'opencode');
  const pluginDir = join(configDir, 'plugin');
  mkdirSync(pluginDir, { recursive: true });
  const model = `${MOCK_MODEL.providerID}/${MOCK_MODEL.modelID}`;
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model,
    small_model: model,
    permission: options.permission ?? { bash: 'ask' },
    provider: {
      [MOCK_MODEL.providerID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Mock',
        options: { baseURL: options.apiUrl, apiKey: 'sk-mock-real-hosts' },
        models: { [MOCK_MODEL.modelID]: { name: 'Mock model', tool_call: true, limit: { context: 100_000, output: 4096 } } },
      },
    },
    ...options.config,
  };
  writeFileSync(join(configDir, 'opencode.json'), JSON.stringify(config, null, 2));
  if (!options.installPluginDependencies) seedPluginDependencies(configDir);
  for (const [name, source] of Object.entries(options.plugins ?? {})) writeFileSync(join(pluginDir, name), source);
  return { ...base, configDir, pluginDir };
}

/** The server's environment: the sandbox's HOME, nothing fetched or updated, nothing of the test's env. */
export function opencodeEnv(sandbox: OpencodeSandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...BASE_ENV,
    HOME: sandbox.home,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    ...extra,
  };
}

/** An event of the server's `GET /event` stream (`{type, properties}`), with when it arrived. */
export interface OpencodeEvent {
  at: number;
  type: string;
  properties: Record<string, unknown>;
}

/** A pending permission request (`GET /permission`), the same shape as a `permission.asked` event's properties. */
export interface OpencodePermission {
  id: string;
  sessionID: string;
  permission: string;
  patterns: string[];
  metadata: Record<string, unknown>;
  always: string[];
  tool?: { messageID: string; callID: string };
}

export interface OpencodeTurn {
  sessionID: string;
  /** The HTTP status of `POST /session/{id}/message`, which answers when the turn has ended. */
  status: number;
  /** Its body: `{info: AssistantMessage, parts}` (or an error). */
  body: unknown;
  ms: number;
}

export interface OpencodeServer {
  url: string;
  /** The project directory every request names (`?directory=`): the sandbox's `work` unless told otherwise. */
  directory: string;
  pid: number;
  stdout: () => string;
  stderr: () => string;
  /** One request to the server, scoped to `directory`, bounded; the body parsed as JSON when it is JSON. */
  request: (method: string, path: string, body?: unknown, timeoutMs?: number) => Promise<{ status: number; body: unknown }>;
  createSession: () => Promise<string>;
  /** Sends a user message; resolves when the turn has ended (the route blocks until then). */
  send: (sessionID: string, text: string, timeoutMs?: number) => Promise<OpencodeTurn>;
  /** A new session and its turn, started: `done` settles when the turn ends. */
  startPrompt: (text: string, timeoutMs?: number) => Promise<{ sessionID: string; done: Promise<OpencodeTurn> }>;
  /** `startPrompt` and its turn's end. */
  prompt: (text: string, timeoutMs?: number) => Promise<OpencodeTurn>;
  pendingPermissions: () => Promise<OpencodePermission[]>;
  /** `POST /permission/{id}/reply`: the route whose `message` reaches the model with a reject. */
  replyPermission: (id: string, reply: 'once' | 'always' | 'reject', message?: string) => Promise<{ status: number; body: unknown }>;
  /** The events of `GET /event` seen since the server started (the stream is opened before the first request). */
  events: OpencodeEvent[];
  waitForEvent: (match: (event: OpencodeEvent) => boolean, timeoutMs: number, what: string) => Promise<OpencodeEvent>;
  /** SIGTERM to the server's process group, SIGKILL after a grace period; resolves when it has exited. */
  stop: () => Promise<void>;
}

const LISTENING = /opencode server listening on (http:\/\/\S+)/;
const GRACE_MS = 3000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * `opencode serve --port <free> --hostname 127.0.0.1` in the sandbox's project, in a process group of its own. It
 * resolves once the server has printed its "listening" line (requests before that line made it stop answering in
 * earlier runs) and its event stream is open. Unlike `opencode run`, which auto-rejects every permission request, the
 * server leaves a request pending until someone (a plugin, the HTTP API) replies.
 */
export async function opencodeServe(
  bin: string,
  sandbox: OpencodeSandbox,
  options: { env?: Record<string, string>; directory?: string; startTimeoutMs?: number; args?: readonly string[] } = {},
): Promise<OpencodeServer> {
  // A port of our own: `--port 0` would take 4096 first, a real OpenCode's default.
  const port = await freeLoopbackPort();
  const directory = options.directory ?? sandbox.work;
  const child = spawn(bin, ['serve', '--port', String(port), '--hostname', '127.0.0.1', ...(options.args ?? [])], {
    cwd: directory,
    env: opencodeEnv(sandbox, options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`opencode serve did not start (${bin})`);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let alive = true;
  void exited.then(() => (alive = false));

  const events: OpencodeEvent[] = [];
  const waiters: (() => void)[] = [];
  const streamAbort = new AbortController();

  const stop = async (): Promise<void> => {
    streamAbort.abort();
    if (alive) {
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    // Whatever it started (a shell, a plugin's child) is in the group too.
    killGroup(pid, 'SIGKILL');
  };

  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = LISTENING.exec(stdout);
        if (found?.[1]) resolve(found[1]);
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`opencode serve exited before listening:\n${stdout}\n${stderr.slice(-4000)}`)));
      setTimeout(() => reject(new Error(`opencode serve printed no listening line within ${startTimeoutMs} ms:\n${stdout}\n${stderr.slice(-4000)}`)), startTimeoutMs).unref();
      check();
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const scoped = (path: string) => `${url}${path}${path.includes('?') ? '&' : '?'}directory=${encodeURIComponent(directory)}`;

  const request = async (method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(scoped(path), {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: parseBody(await res.text()) };
  };

  // The event stream: `data: {type, properties}` lines, read until stop().
  const streamOpen = new Promise<void>((resolve, reject) => {
    fetch(scoped('/event'), { signal: streamAbort.signal, headers: { accept: 'text/event-stream' } }).then(async (res) => {
      if (!res.ok || !res.body) return reject(new Error(`GET /event answered ${res.status}`));
      resolve();
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          for (const line of lines) {
            if (!line.startsWith('data:')) continue;
            const event = parseBody(line.slice(5).trim()) as { type?: unknown; properties?: unknown } | null;
            if (!event || typeof event.type !== 'string') continue;
            events.push({ at: Date.now(), type: event.type, properties: (event.properties ?? {}) as Record<string, unknown> });
            waiters.splice(0).forEach((wake) => wake());
          }
        }
      } catch {
        // Aborted by stop(), or the server went away.
      }
    }, reject);
  });
  try {
    await Promise.race([streamOpen, new Promise((_, reject) => setTimeout(() => reject(new Error('GET /event did not open within 15 s')), 15_000).unref())]);
  } catch (error) {
    await stop();
    throw error;
  }

  const waitForEvent = async (match: (event: OpencodeEvent) => boolean, timeoutMs: number, what: string): Promise<OpencodeEvent> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = events.find(match);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`opencode: ${what} did not happen within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, Math.min(left, 250));
      });
    }
  };

  const createSession = async (): Promise<string> => {
    const res = await request('POST', '/session', {});
    const id = (res.body as { id?: unknown } | null)?.id;
    if (res.status !== 200 || typeof id !== 'string') throw new Error(`POST /session answered ${res.status}: ${JSON.stringify(res.body)}`);
    return id;
  };

  const send = async (sessionID: string, text: string, timeoutMs = 90_000): Promise<OpencodeTurn> => {
    const started = Date.now();
    const res = await request('POST', `/session/${sessionID}/message`, { parts: [{ type: 'text', text }], model: MOCK_MODEL }, timeoutMs);
    return { sessionID, status: res.status, body: res.body, ms: Date.now() - started };
  };

  const startPrompt = async (text: string, timeoutMs?: number) => {
    const sessionID = await createSession();
    return { sessionID, done: send(sessionID, text, timeoutMs) };
  };

  return {
    url,
    directory,
    pid,
    stdout: () => stdout,
    stderr: () => stderr,
    request,
    createSession,
    send,
    startPrompt,
    prompt: async (text, timeoutMs) => (await startPrompt(text, timeoutMs)).done,
    pendingPermissions: async () => {
      const res = await request('GET', '/permission');
      if (res.status !== 200 || !Array.isArray(res.body)) throw new Error(`GET /permission answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body as OpencodePermission[];
    },
    replyPermission: (id, reply, message) => request('POST', `/permission/${id}/reply`, message === undefined ? { reply } : { reply, message }),
    events,
    waitForEvent,
    stop,
  };
}
