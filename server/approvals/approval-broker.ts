import type { Status } from '../../shared/lifecycle.js';
import { startHub } from '../hub/hub-server.js';
import type { Hub } from '../hub/hub-server.js';
import { log } from '../log.js';
import { ensureStateDir, relaySecret } from '../state-dir.js';
import { ApprovalEngine } from './approval-engine.js';
import { RelayService } from './relay-service.js';
import type { Answer, ApprovalService, CreateParams, Created } from './service.js';
import { fail } from './service.js';

const ROLE_RETRY_MS = 100;
const FIND_HUB_WITHIN_MS = 5000;

/**
 * Decides lazily, on the first approval call, whether this process is the hub (it bound the port) or a relay, and
 * takes over as hub when the hub's process ends. Nothing happens at start-up: hosts spawn throw-away servers.
 */
export class ApprovalBroker implements ApprovalService {
  private current: Promise<ApprovalService> | undefined;
  private hub: { hub: Hub; engine: ApprovalEngine } | undefined;

  constructor(private readonly config: { port: number; dir: string; retentionDays: number }) {}

  role(): 'hub' | 'relay' | 'none' {
    if (this.hub) return 'hub';
    return this.current ? 'relay' : 'none';
  }

  private service(): Promise<ApprovalService> {
    this.current ??= this.findRole().catch((error: unknown) => {
      this.current = undefined;
      throw error;
    });
    return this.current;
  }

  private async findRole(): Promise<ApprovalService> {
    const { port, dir } = this.config;
    ensureStateDir(dir);
    const secret = relaySecret(dir);
    const deadline = Date.now() + FIND_HUB_WITHIN_MS;
    while (Date.now() < deadline) {
      const engine = await ApprovalEngine.open(dir, this.config.retentionDays);
      const hub = await startHub({ port, dir, secret, engine }).catch((error: unknown) => {
        log('warn', 'could not listen', { error: String(error) });
        return null;
      });
      if (hub) {
        this.hub = { hub, engine };
        return engine;
      }
      await engine.close();
      const relay = await RelayService.connect(port, secret);
      if (relay) {
        relay.onclose = () => {
          log('info', 'hub connection lost; taking over or reconnecting');
          this.current = undefined;
          // Take over at once, not on the next tool call: the extension needs a hub to reconnect to.
          this.service().catch((error: unknown) => log('warn', 'takeover failed', { error: String(error) }));
        };
        return relay;
      }
      await new Promise((resolve) => setTimeout(resolve, ROLE_RETRY_MS));
    }
    throw new Error(`no hub on 127.0.0.1:${port} and the port could not be bound`);
  }

  /** A call that lost its hub mid-flight is retried on the next one; the stored state makes every method safe to repeat. */
  private async run<T>(call: (service: ApprovalService) => Promise<Answer<T>>): Promise<Answer<T>> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let service: ApprovalService;
      try {
        service = await this.service();
      } catch (error) {
        return fail('unavailable', String((error as Error).message));
      }
      const answer = await call(service);
      if (answer.ok || answer.error.code !== 'unavailable') return answer;
    }
    return fail('unavailable', 'the approval hub kept going away; try again');
  }

  create(params: CreateParams): Promise<Answer<Created>> {
    return this.run((s) => s.create(params));
  }
  status(id: string): Promise<Answer<{ status: Status }>> {
    return this.run((s) => s.status(id));
  }
  await(id: string, waitMs: number, signal?: AbortSignal): Promise<Answer<{ status: Status }>> {
    const until = Date.now() + waitMs;
    return this.run((s) => s.await(id, Math.max(1, until - Date.now()), signal));
  }
  result(id: string): Promise<Answer<Record<string, unknown>>> {
    return this.run((s) => s.result(id));
  }
  cancel(id: string): Promise<Answer<{ status: 'canceled' }>> {
    return this.run((s) => s.cancel(id));
  }

  async close(): Promise<void> {
    if (this.hub) {
      await this.hub.hub.close();
      await this.hub.engine.close();
    }
  }
}
