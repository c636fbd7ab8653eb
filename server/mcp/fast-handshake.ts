// The server's first answers, before the MCP SDK is loaded: a host spawns a server per session and waits for
// `initialize` and `tools/list`, and loading the SDK (its server, stdio and protocol schemas) is most of a start. The
// answers are the SDK's own, recorded by the build from this very bundle (scripts/record-handshake.mjs); this module
// only picks the recorded answer for a message it recognises whole, and hands everything else, and later everything,
// to the SDK. It imports nothing that imports zod or the SDK: that is its point. The SDK loads only when a message needs
// it (a tool call, anything not recognised) or the input ends: most servers a host spawns sit through a session without
// a call, and such a server stays small (53 MiB RSS with its configuration checked, not 60); the first call pays the
// load instead.
import type { Readable, Writable } from 'node:stream';
import { declaresAppUi } from '../../shared/app-capability.js';
import { takeLines } from './stdio-lines.js';

/** Which recorded answer (dist/server/handshake/index.json) answers what, as the build writes it. */
export interface HandshakeIndex {
  format: 1;
  /** By era, then the protocol version the client asked for, then whether it renders apps, then method: an answer's number. */
  legacy: Record<string, Record<Surface, Record<string, number>>>;
  modern: Record<string, Record<Surface, Record<string, number>>>;
}

/** A recorded answer: the SDK's response line as the text before and after its id. */
export type RecordedAnswer = [string, string];
type Surface = 'plain' | 'apps';

/** What the SDK is handed when it takes over: what came before it, in order, and what it must answer into the void. */
export interface Opening {
  /** Lines for the SDK's transport to handle first, in arrival order: replays of what was answered here, and the rest. */
  lines: string[];
  /** Input after the last newline. */
  rest: string;
  /** The private id of each replayed request, with the answer sent for it here: the SDK's own answer is compared, not sent. */
  replays: Map<string, RecordedAnswer>;
  /** Whether the input ended before the SDK took over. */
  ended: boolean;
  /** The methods answered here, in order (for the log). */
  answered: string[];
}

export interface FastHandshakeOptions {
  input: Readable;
  output: Writable;
  answers: HandshakeIndex;
  /**
   * Reads answer `n`, or undefined if it cannot. Each answer is a file of its own, read when it is sent: a listing is
   * tens of KB, and what a process once read stays in its memory for good (1.3 MiB more idle RSS when all were read).
   */
  answer: (n: number) => RecordedAnswer | undefined;
  /** Whether this process may offer the review in the chat (no relay key): the same condition the SDK's server gets. */
  appSurface: boolean;
  /** Called once, when the SDK must load: a message needs it, or the input ended. */
  load: () => void;
  /**
   * Called once when the handshake has settled (answered, then 10 ms without input) or no first message came within
   * 250 ms: a moment when nothing is asked, for what may block the thread briefly (the bin checks its configuration).
   */
  settled?: () => void;
}

/** Notifications held for the SDK (a host's `notifications/initialized`, a roots change): past this many, it loads. */
const MAX_HELD = 64;
/** Input quiet this long after an answer: the handshake has settled (a host's next message follows within it). */
const SETTLED_MS = 10;
/** No first message this long: settled too (a host writes `initialize` as it spawns the server). */
const FIRST_MESSAGE_MS = 250;
/** A line longer than this is not a handshake: the SDK's transport applies its own bound to it. */
const MAX_HANDSHAKE_LINE = 1024 * 1024;
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const ENVELOPE_KEYS = [PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY];
/** Requests answered here besides `initialize` (2025) and `server/discover` (2026-07-28), once an era is set. */
const LISTS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'ping']);
const REPLAY_ID_PREFIX = 'elicitly-fast-handshake-';

type Json = Record<string, unknown>;
const isPlain = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasOnly = (value: Json, keys: readonly string[]) => Object.keys(value).every((key) => keys.includes(key));

/**
 * Whether `capabilities` is one the SDK accepts in both eras, by a stricter rule than its schemas (anything unusual is
 * left to the SDK, which refuses or accepts it itself): every capability an object, the known ones' known fields of
 * their types, no `tasks`.
 */
export function plainCapabilities(capabilities: unknown): boolean {
  if (!isPlain(capabilities)) return false;
  return Object.entries(capabilities).every(([key, value]) => {
    if (!isPlain(value)) return false;
    switch (key) {
      case 'experimental':
      case 'extensions':
        return Object.values(value).every(isPlain);
      case 'sampling':
        return ['context', 'tools'].every((field) => value[field] === undefined || isPlain(value[field]));
      case 'elicitation': {
        const { form, url } = value;
        if (url !== undefined && !isPlain(url)) return false;
        return form === undefined || (isPlain(form) && (form.applyDefaults === undefined || typeof form.applyDefaults === 'boolean'));
      }
      case 'roots':
        return value.listChanged === undefined || typeof value.listChanged === 'boolean';
      case 'tasks':
        return false;
      default:
        return true;
    }
  });
}

/** A request's progress token, when it has one: a string or an integer (Codex and Copilot CLI send one with tools/list). */
const progressTokenOk = (meta: Json) => meta.progressToken === undefined || typeof meta.progressToken === 'string' || Number.isInteger(meta.progressToken);

/** Whether `info` is an implementation's name and version as the SDK accepts it (icons are left to the SDK). */
export function plainClientInfo(info: unknown): boolean {
  if (!isPlain(info) || typeof info.name !== 'string' || typeof info.version !== 'string' || info.icons !== undefined) return false;
  return ['title', 'websiteUrl', 'description'].every((field) => info[field] === undefined || typeof info[field] === 'string');
}

/** How deep a recognised request's params may nest: real ones are a few levels; a deeper one is the SDK's to bound. */
const MAX_DEPTH = 16;

/** Whether `value` nests at most `max` levels of objects and arrays; iterative, so a 100,000-level value is no danger. */
export function shallow(value: unknown, max = MAX_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= max) return false;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return true;
}

/** What a message asks of the handshake, or null when the SDK must see it: its era, version, surface and method. */
export type Recognised = { era: 'legacy' | 'modern'; version: string; apps: boolean; method: string; id: string | number };

/**
 * Recognises a request the recorded answers cover, given the era already set here (null before the first answer).
 * Only whole, ordinary shapes: a request the SDK could answer differently (extra fields, a cursor, `_meta` on a 2025
 * request, an unknown protocol version) is not recognised.
 */
export function recognise(message: unknown, answers: HandshakeIndex, appSurface: boolean, pinned: Omit<Recognised, 'method' | 'id'> | null): Recognised | null {
  if (!isPlain(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string' || !hasOnly(message, ['jsonrpc', 'id', 'method', 'params'])) return null;
  const { id, method, params } = message;
  // Replayed to the SDK re-serialized (JSON.stringify recurses): only what is shallow is answered here.
  if (!shallow(params)) return null;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) || (typeof id === 'string' && id.startsWith(REPLAY_ID_PREFIX))) return null;
  if (method === 'initialize') {
    if (pinned !== null || !isPlain(params) || !hasOnly(params, ['protocolVersion', 'capabilities', 'clientInfo'])) return null;
    const { protocolVersion, capabilities, clientInfo } = params;
    if (typeof protocolVersion !== 'string' || !Object.hasOwn(answers.legacy, protocolVersion) || !plainCapabilities(capabilities) || !plainClientInfo(clientInfo)) return null;
    return { era: 'legacy', version: protocolVersion, apps: appSurface && declaresAppUi(capabilities), method, id };
  }
  if (!LISTS.has(method) && method !== 'server/discover') return null;
  if (pinned?.era === 'legacy') {
    const plain = params === undefined || (isPlain(params) && hasOnly(params, ['_meta']) && (params._meta === undefined || (isPlain(params._meta) && hasOnly(params._meta, ['progressToken']) && progressTokenOk(params._meta))));
    return LISTS.has(method) && plain ? { ...pinned, method, id } : null;
  }
  // 2026-07-28: every request carries its envelope; the first one sets the era, and a later one must say the same.
  if (!isPlain(params) || !hasOnly(params, ['_meta']) || !isPlain(params._meta)) return null;
  const meta = params._meta;
  if (!hasOnly(meta, [...ENVELOPE_KEYS, 'progressToken']) || !ENVELOPE_KEYS.every((key) => Object.hasOwn(meta, key)) || !progressTokenOk(meta)) return null;
  const version = meta[PROTOCOL_VERSION_KEY];
  if (typeof version !== 'string' || !Object.hasOwn(answers.modern, version) || !plainClientInfo(meta[CLIENT_INFO_KEY]) || !plainCapabilities(meta[CLIENT_CAPABILITIES_KEY])) return null;
  const apps = appSurface && declaresAppUi(meta[CLIENT_CAPABILITIES_KEY]);
  if (pinned !== null && (pinned.era !== 'modern' || pinned.version !== version || pinned.apps !== apps)) return null;
  return { era: 'modern', version, apps, method, id };
}

/**
 * Reads stdin until the SDK takes over, answering what it recognises from the recorded answers. It stops answering
 * at the first message it does not recognise: from there on everything waits for the SDK, in order.
 */
export class FastHandshake {
  private buffer = '';
  private readonly lines: string[] = [];
  private readonly replays = new Map<string, RecordedAnswer>();
  private readonly answered: string[] = [];
  private pinned: Omit<Recognised, 'method' | 'id'> | null = null;
  /** Set at the first message left to the SDK: nothing is answered here after it. */
  private deferring = false;
  private ended = false;
  private loading = false;
  private handedOver = false;
  private settling: NodeJS.Timeout | undefined;
  private hasSettled = false;

  constructor(private readonly options: FastHandshakeOptions) {
    options.input.setEncoding('utf8');
    options.input.on('data', this.onData);
    options.input.on('end', this.onEnd);
    // Nothing to answer on a closed stdout: the SDK's transport, when it takes over, closes the connection.
    options.output.once('error', this.onEnd);
    this.settleIn(FIRST_MESSAGE_MS);
  }

  /** Stops reading and hands over what came: from now on the SDK's transport reads the input. Once only. */
  handOver(): Opening {
    if (this.handedOver) throw new Error('the handshake was handed over already');
    this.handedOver = true;
    clearTimeout(this.settling);
    const { input, output } = this.options;
    input.off('data', this.onData);
    input.off('end', this.onEnd);
    output.off('error', this.onEnd);
    // Paused until the transport's start() resumes it: with no reader attached, flowing data would be lost.
    input.pause();
    return { lines: this.lines, rest: this.buffer, replays: this.replays, ended: this.ended, answered: this.answered };
  }

  private readonly onData = (chunk: string): void => {
    this.buffer = takeLines(this.buffer + chunk, (line) => this.handleLine(line));
    if (this.buffer.length > MAX_HANDSHAKE_LINE) this.defer();
    if (this.deferring) this.startLoading();
    else this.settleIn(SETTLED_MS);
  };

  private handleLine(line: string): void {
    if (this.deferring) {
      this.lines.push(line);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    const isNotification = isPlain(message) && message.jsonrpc === '2.0' && typeof message.method === 'string' && !('id' in message);
    const request = this.pinned !== null && isNotification ? null : recognise(message, this.options.answers, this.options.appSurface, this.pinned);
    // A notification after the handshake (`notifications/initialized`) is the SDK's, in its place; it needs no answer.
    if (request === null) {
      this.lines.push(line);
      if (!(this.pinned !== null && isNotification) || this.lines.length - this.replays.size > MAX_HELD) this.defer();
      return;
    }
    const index = this.options.answers[request.era][request.version]?.[request.apps ? 'apps' : 'plain']?.[request.method];
    const answer = index === undefined ? undefined : this.options.answer(index);
    if (answer === undefined) {
      this.lines.push(line);
      this.defer();
      return;
    }
    this.options.output.write(`${answer[0]}${JSON.stringify(request.id)}${answer[1]}\n`);
    this.pinned = { era: request.era, version: request.version, apps: request.apps };
    this.answered.push(request.method);
    // The SDK gets the request too, under a private id, so that its state is what it would have been; its answer is
    // compared with the one sent and dropped.
    const replayId = `${REPLAY_ID_PREFIX}${this.replays.size}`;
    this.replays.set(replayId, answer);
    this.lines.push(JSON.stringify({ ...(message as Json), id: replayId }));
  }

  private defer(): void {
    this.deferring = true;
  }

  private readonly onEnd = (): void => {
    this.ended = true;
    this.startLoading();
  };

  /** (Re)arms the one `settled` call; once it has run, or the SDK is loading, there is nothing to arm. */
  private settleIn(ms: number): void {
    if (this.hasSettled || this.loading) return;
    clearTimeout(this.settling);
    this.settling = setTimeout(() => {
      this.hasSettled = true;
      this.options.settled?.();
    }, ms);
  }

  private startLoading(): void {
    clearTimeout(this.settling);
    if (this.loading) return;
    this.loading = true;
    this.options.load();
  }
}

/** The handshake started by the bin (server/start.ts), for the server to take over (server/main.ts). */
let current: FastHandshake | undefined;

export function startFastHandshake(options: FastHandshakeOptions): FastHandshake {
  current = new FastHandshake(options);
  return current;
}

/** What the fast handshake saw and answered, for the SDK's transport; undefined when none ran (or it was taken). */
export function takeOverHandshake(): Opening | undefined {
  const handshake = current;
  current = undefined;
  return handshake?.handOver();
}
