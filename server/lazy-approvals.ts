import type { Answer, AgentMethod, ApprovalService, Params, Result } from '../shared/peer-calls.js';

interface Closable extends ApprovalService {
  close(): Promise<void>;
  role(): 'hub' | 'relay' | 'none';
}

/**
 * The approval machinery (role election, hub, relay, engine, store, their schemas) loaded on the first approval call
 * instead of at start: most sessions never make one, and a host spawns a server per session, so what is not loaded
 * is memory and start-up time saved every time (measured: idle RSS 78 → ~68 MB).
 */
export class LazyApprovals implements ApprovalService {
  private loaded: Promise<Closable> | undefined;
  private service: Closable | undefined;

  constructor(private readonly load: () => Promise<Closable>) {}

  call<M extends AgentMethod>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Answer<Result<M>>> {
    this.loaded ??= this.load().then((service) => (this.service = service));
    return this.loaded.then((service) => service.call(method, params, signal));
  }

  /** This process's part in the approvals, without electing one: 'none' until the first approval call. */
  role(): 'hub' | 'relay' | 'none' {
    return this.service?.role() ?? 'none';
  }

  /** Closes what was loaded, if anything was. */
  async close(): Promise<void> {
    await (await this.loaded?.catch(() => undefined))?.close();
  }
}
