// `elicitly-companion hook --host <host> [--wait S] <event>`: one host prompt, asked of the person in the extension. Every step is bounded and every failure falls back: printing nothing lets the host show its own prompt,
// so a person is never blocked by this bridge, only spared the terminal when they are elsewhere.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ApprovalService } from '../../shared/peer-calls.js';
import { AskResultSchema } from '../../shared/ask-input.js';
import { PERMISSION_LIMITS, PermissionResultSchema, type PermissionRequest } from '../../shared/permission.js';
import type { PathContext } from '../../shared/rule-match.js';
import type { FormAsk } from '../../shared/ask-input.js';
import { RelayClient } from '../hub/relay-client.js';
import { listening } from '../hub/status-command.js';
import type { RemoteHub } from '../config.js';
import { createDurableRequest, newElicitationId } from '../durable-request.js';
import type { StateDir } from '../state-dir.js';
import type { HookEvent, HookHost, HookOutput } from './hosts/hook-host.js';
import { elicitationAsk, permissionRequest, type FileReader } from './hook-request.js';
import { readStdin } from './read-stdin.js';
import { promptRequestId, type WaitingPrompts } from './waiting-prompts.js';

export interface HookOptions {
  host: HookHost;
  event: HookEvent;
  waitSeconds: number;
  port: number;
  state: StateDir;
  stdin: Readable;
  /** Starts a detached hub for the next prompt; this one falls back. */
  spawnHub: () => void;
  /** ELICITLY_HUB_URL + ELICITLY_HUB_KEY: the hub is on another machine; none is started here. */
  remoteHub?: RemoteHub;
  /** The marks of the prompts hooks wait on (`waiting-prompts.ts`), read by the PostToolUse hooks' guard. */
  waiting: WaitingPrompts;
  /** How a rule's paths resolve, as the hub resolves them (`ApprovalEngine`'s `paths`). */
  paths: PathContext;
  /** Runs `withdraw` when the host ends this hook (SIGTERM: the person answered "No" in the terminal, or time ran out). */
  onTerminate(withdraw: () => void): void;
}

/** What the hook prints (nothing when it falls back) and, for the report and the tests, what happened. */
export type HookRun = { output: HookOutput | null; outcome: string };

const CALL_TIMEOUT_MS = 5000;
const HANDSHAKE_TIMEOUT_MS = 3000;
/** How long before the request's deadline the hook stops waiting and withdraws it. */
const WITHDRAW_MARGIN_MS = 250;

const fallBack = (outcome: string): HookRun => ({ output: null, outcome });

/** A file under the size an edit's diff may have, as text; anything else (absent, a directory, too big) is null. */
function fileReader(cwd: string): FileReader {
  return (path) => {
    const full = isAbsolute(path) ? path : join(cwd, path);
    try {
      if (statSync(full).size > PERMISSION_LIMITS.diff) return null;
      return readFileSync(full, 'utf8');
    } catch {
      return null;
    }
  };
}

export async function runHook(options: HookOptions): Promise<HookRun> {
  const deadline = Date.now() + options.waitSeconds * 1000;
  const stdin = await readStdin(options.stdin);
  if (!stdin.ok) return fallBack(stdin.why);
  let raw: unknown;
  try {
    raw = JSON.parse(stdin.text);
  } catch {
    return fallBack('stdin: is not JSON');
  }
  const { host } = options;
  const parsed = host.parse(options.event, raw);
  if (!parsed.ok) return fallBack(parsed.issue);
  if (parsed.kind === 'answered') return withdrawAnswered(options, parsed.sessionId, parsed.toolUseId);
  if (parsed.kind === 'elicitation' && !host.elicitationOutput) return fallBack(`${options.event}: ${host.name}'s forms are not bridged`);
  const mapped =
    parsed.kind === 'elicitation'
      ? elicitationAsk(host, parsed.prompt, options.waitSeconds)
      : permissionRequest(host, parsed.event, parsed.prompt, options.waitSeconds, fileReader(parsed.prompt.cwd));
  if (!mapped.ok) return fallBack(mapped.why);

  // The call this prompt is about, when the host names it (or its transcript does): the guard that sees the call ran
  // finds the request by it. Looked for while the hub is reached, as a transcript line may come a little later.
  const toolUseIdFound = parsed.kind === 'tool' && host.answeredEvents.length > 0 ? (host.findToolUseId?.(parsed.event, parsed.prompt) ?? Promise.resolve(parsed.prompt.toolUseId ?? null)) : Promise.resolve(null);
  const remote = options.remoteHub;
  if (!remote && !(await listening(options.port))) {
    options.spawnHub();
    return fallBack(`no hub on 127.0.0.1:${options.port}: started one for the next prompt`);
  }
  const target = remote ? { port: remote.port, url: remote.url, keyId: remote.keyId, key: remote.key } : { port: options.port, key: options.state.relayKey() };
  const connection = await RelayClient.connect({ ...target, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS, callTimeoutMs: CALL_TIMEOUT_MS });
  if (!connection.ok) return fallBack(`cannot reach the hub: ${connection.detail}`);
  const relay = connection.relay;
  const toolUseId = await toolUseIdFound;
  const id = toolUseId === null ? newElicitationId() : promptRequestId(host.id, parsed.prompt.sessionId, toolUseId);
  const marked = toolUseId !== null && options.waiting.mark(id);
  options.onTerminate(() => {
    // The host ended this hook: its prompt was answered there, or its time is up. Closing the socket withdraws the
    // request (it is bound to this connection); the mark goes now, before the host's SIGKILL.
    if (marked) options.waiting.unmark(id);
    relay.close();
  });
  try {
    return await ask(relay, options, mapped.request, deadline, id);
  } finally {
    if (marked) options.waiting.unmark(id);
    relay.close();
  }
}

/**
 * The host ran (or tried to run) a tool call: if its prompt was answered in the terminal while a hook still waits for
 * the person in a reviewer, that request is withdrawn. Prints nothing; every step bounded, every failure harmless.
 */
async function withdrawAnswered(options: HookOptions, sessionId: string, toolUseId: string): Promise<HookRun> {
  const id = promptRequestId(options.host.id, sessionId, toolUseId);
  options.waiting.sweep();
  if (!options.waiting.waiting(id)) return fallBack('no prompt of this call is waiting');
  const remote = options.remoteHub;
  const target = remote ? { port: remote.port, url: remote.url, keyId: remote.keyId, key: remote.key } : { port: options.port, key: options.state.relayKey() };
  const connection = await RelayClient.connect({ ...target, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS, callTimeoutMs: CALL_TIMEOUT_MS });
  if (!connection.ok) return fallBack(`cannot reach the hub: ${connection.detail}`);
  try {
    const canceled = await connection.relay.call('cancel', { id });
    return fallBack(canceled.ok ? `withdrew ${id}: the prompt was answered in the terminal` : `nothing to withdraw (${canceled.error.code})`);
  } finally {
    connection.relay.close();
  }
}

async function ask(relay: ApprovalService, options: HookOptions, request: PermissionRequest | FormAsk, deadline: number, id: string): Promise<HookRun> {
  const info = await relay.call('info', {});
  if (!info.ok) return fallBack(`the hub answered ${info.error.code}: ${info.error.message}`);
  // With nobody to ask, the person's own rules still answer: a request is filed only when one of them decides it (the
  // hub decides it again at create, which is what counts), so nothing waits for a reviewer who is not there.
  const nobody = info.value.extensionsConnected === 0;
  if (nobody && !(request.kind === 'permission' && (await aRuleDecides(relay, request, options.paths)))) return fallBack('no browser extension is connected');
  // The request's timeoutSeconds is the hook's wait (hook-request.ts): it ends when the host stops waiting.
  const created = await createDurableRequest(relay, {
    id,
    request,
    client: `${options.host.id} hook`,
    // No chat shows a review of a host's own prompt: only the extension can decide it.
    surfaces: ['extension'],
    // The question lives only as long as this hook: whatever ends it (its host, a signal, a crash) withdraws it.
    bound: true,
  });
  if (!created.ok) return fallBack(`the hub refused the request: ${created.error.message}`);
  if (created.value.status === 'pending' && nobody) {
    // The rule that matched a moment ago has ended since (expired, removed): the host asks.
    await relay.call('cancel', { id });
    return fallBack('no browser extension is connected, and no rule decided the request');
  }
  if (created.value.status === 'pending') {
    // Stops waiting a moment before the request's own deadline, so the withdrawal lands before the hub records it as
    // expired (a loaded machine made the cancel arrive after it, and the request read "expired", not "canceled").
    const waitMs = deadline - Date.now() - WITHDRAW_MARGIN_MS;
    const waited = waitMs > 0 ? await relay.call('await', { id, waitMs: Math.min(waitMs, 600_000) }) : undefined;
    const status = waited?.ok ? waited.value.status : 'pending';
    if (status === 'expired' || status === 'canceled') return fallBack(`the request ${status}`);
    if (status === 'pending') {
      const canceled = await relay.call('cancel', { id });
      // The person answered as the wait ended: their answer stands.
      if (canceled.ok || canceled.error.code !== 'already_decided') return fallBack(`no answer within ${options.waitSeconds} s; the request is canceled`);
    }
  }
  const result = await relay.call('result', { id });
  if (!result.ok) return fallBack(`cannot read the answer: ${result.error.message}`);
  if (request.kind === 'form') {
    const answer = AskResultSchema.safeParse(result.value);
    return answer.success ? { output: options.host.elicitationOutput?.(answer.data) ?? null, outcome: `form ${answer.data.action} (${answer.data.via})` } : fallBack('the hub answered a result of another kind');
  }
  const answer = PermissionResultSchema.safeParse(result.value);
  if (!answer.success) return fallBack('the hub answered a result of another kind');
  const session = await savedForThisSession(relay, answer.data.ruleId, answer.data.decidedVia);
  const output = options.host.output(request, answer.data, session);
  return { output, outcome: `${answer.data.behavior} (${answer.data.decidedVia}${answer.data.ruleId ? `, ${answer.data.ruleId}` : ''})` };
}

/** Whether one of the person's rules decides this request now (the hub's list, the same pure match the hub runs). */
async function aRuleDecides(relay: ApprovalService, request: PermissionRequest, paths: PathContext): Promise<boolean> {
  // Loaded here: the shell parser is needed only when nobody is connected to ask.
  const [{ decidingRule, ruleSubject }, rules] = await Promise.all([import('../../shared/rule-match.js'), relay.call('rules', {})]);
  return rules.ok && decidingRule(rules.value.rules, ruleSubject(request, request.host), Date.now(), paths) !== null;
}

/** Whether the person saved an "always allow in this session" rule with this decision (not one a rule made itself). */
async function savedForThisSession(relay: ApprovalService, ruleId: string | undefined, decidedVia: string): Promise<boolean> {
  if (ruleId === undefined || decidedVia === 'rule') return false;
  const rules = await relay.call('rules', {});
  return rules.ok && rules.value.rules.some((rule) => rule.id === ruleId && rule.match.sessionId !== undefined);
}
