import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { DecideParams } from '../../shared/wire-protocol.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { ScriptedExtension, pairedKey } from '../helpers/scripted-extension.js';
import { BASE_ENV, runHost, type HostRun } from './host-process.js';

/** A loopback port nobody holds right now (the kernel's pick, released at once for the hub to bind). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** What the hook needs to find the hub: the host passes its environment on to the hooks it runs. */
export type CompanionEnv = Record<'ELICITLY_PORT' | 'ELICITLY_STATE_DIR', string>;

/** `elicitly-companion hub` (the foreground hub the hook would otherwise start detached), on a free port. */
export class RunningHub {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly stateDir: string,
    private readonly stderr: () => string,
  ) {}

  static async start(stateDir: string, home: string): Promise<RunningHub> {
    const port = await freeLoopbackPort();
    const env = { ...BASE_ENV, HOME: home, ELICITLY_PORT: String(port), ELICITLY_STATE_DIR: stateDir, ELICITLY_LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, [SERVER_ENTRY, 'hub'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const hub = new RunningHub(child, port, stateDir, () => stderr);
    // Ready = a paired extension completes the handshake (until its engine is open the port answers 503).
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`elicitly-companion hub exited with ${child.exitCode}: ${stderr}`);
      const probe = await ScriptedExtension.connect(port, { key: pairedKey(stateDir) }).catch(() => null);
      if (probe) {
        probe.close();
        await probe.closed;
        return hub;
      }
      if (Date.now() > deadline) {
        await hub.stop();
        throw new Error(`elicitly-companion hub did not accept an extension on ${port} within 15 s: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  get env(): CompanionEnv {
    return { ELICITLY_PORT: String(this.port), ELICITLY_STATE_DIR: this.stateDir };
  }

  /** A scripted stand-in for the person's extension, paired with this hub (`test/helpers/scripted-extension.ts`). */
  connectExtension(): Promise<ScriptedExtension> {
    return ScriptedExtension.connect(this.port, { key: pairedKey(this.stateDir) });
  }

  log(): string {
    return this.stderr();
  }

  /** Ends the hub by its pid: SIGTERM, and SIGKILL if it has not exited within 5 s. */
  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  }
}

/**
 * `elicitly-companion hooks install <host> …`, as a person would run it in their project, with the sandbox's HOME
 * (and CLAUDE_CONFIG_DIR / CODEX_HOME) so nothing outside it is touched.
 */
export async function hooksInstall(host: string, args: readonly string[], options: { cwd: string; env: Record<string, string> }): Promise<HostRun> {
  const run = await runHost(process.execPath, [SERVER_ENTRY, 'hooks', 'install', host, ...args], { cwd: options.cwd, env: { ...BASE_ENV, ...options.env }, timeoutMs: 20_000 });
  expect(run.code, `hooks install ${host} ${args.join(' ')}: ${run.stdout}${run.stderr}`).toBe(0);
  return run;
}

/** The next request that reaches the extension waiting for the person. */
export async function nextPending(extension: ScriptedExtension, timeoutMs: number): Promise<RequestView> {
  const created = await extension.notice('request.created', (p) => p.request.status === 'pending', timeoutMs);
  return created.request;
}

/** Every request.created the extension received and nobody took yet (a rule's decisions arrive this way, decided). */
export function createdSoFar(extension: ScriptedExtension): RequestView[] {
  return extension.notices('request.created').map((p) => p.request);
}

/** The person's decision, as the extension's review sends it; resolves once the hub has made it durable. */
export async function decide(extension: ScriptedExtension, request: RequestView, decision: 'approved' | 'rejected', extra: Pick<DecideParams, 'values' | 'comment' | 'rule'> = {}): Promise<void> {
  const result = await extension.call('decide', { elicitationId: request.elicitationId, idempotencyKey: randomUUID(), decision, ...extra }, 10_000);
  expect(result.result, JSON.stringify(result)).toMatchObject({ ok: true });
}
