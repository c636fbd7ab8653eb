// `elicitly-companion hub`: the hub in the foreground, for hooks. A hook lives for one prompt, so it cannot hold the hub
// itself; this process does, and leaves once nobody needs it (no pending request, no relay) for the idle time.
import type { ApprovalService } from '../../shared/peer-calls.js';

/** The role election, as this command needs it (`RoleElection` in server/hub/). */
export interface HubElection extends ApprovalService {
  role(): 'hub' | 'relay' | 'none';
  relaysConnected(): number | null;
  close(): Promise<void>;
}

export interface HubCommandOptions {
  election: HubElection;
  idleMs: number;
  /** How often it looks; default a tenth of the idle time, between 1 s and 60 s. */
  checkEveryMs?: number;
  /** Resolves when the process is asked to stop (SIGTERM, SIGINT). */
  stop: Promise<void>;
  /**
   * Something besides requests and agents needs the hub now (the phone page is on: its link works only while a hub
   * runs); asked at every look. Default: nothing.
   */
  needed?: () => boolean;
  now?: () => number;
}

export type HubCommandEnd = { code: number; message: string };

const sleep = (ms: number, stop: Promise<void>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void stop.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

export async function runHubCommand(options: HubCommandOptions): Promise<HubCommandEnd> {
  const { election } = options;
  const now = options.now ?? Date.now;
  // The first call elects: this process binds the port, or finds another that holds it.
  const first = await election.call('info', {});
  if (!first.ok) {
    await election.close();
    return { code: 1, message: `cannot run the hub: ${first.error.message}` };
  }
  if (election.role() !== 'hub') {
    await election.close();
    return { code: 0, message: `another process (pid ${first.value.pid}) already is the hub; nothing to do` };
  }
  let stopped = false;
  void options.stop.then(() => (stopped = true));
  const every = options.checkEveryMs ?? Math.min(60_000, Math.max(1000, Math.round(options.idleMs / 10)));
  let idleSince: number | null = null;
  let end: HubCommandEnd = { code: 0, message: 'stopped' };
  while (!stopped) {
    await sleep(every, options.stop);
    if (stopped) break;
    const info = await election.call('info', {});
    if (election.role() !== 'hub') {
      end = { code: 0, message: 'another process took over as the hub; leaving' };
      break;
    }
    const busy = !info.ok || info.value.pending > 0 || (election.relaysConnected() ?? 0) > 0 || (options.needed?.() ?? false);
    idleSince = busy ? null : (idleSince ?? now());
    if (idleSince !== null && now() - idleSince >= options.idleMs) {
      end = { code: 0, message: `idle for ${Math.round(options.idleMs / 1000)} s (no pending request, no agent connected, the phone page off); stopping` };
      break;
    }
  }
  await election.close();
  return end;
}
