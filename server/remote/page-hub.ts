/**
 * The phone page is served by the hub, so its link works only while one runs. `remote enable` and `remote pair` make
 * sure one does: already there, or started in the background (`elicitly-companion hub`, which stays while the page is
 * on). Bounded: it looks for the new hub at most `attempts` times, `pauseMs` apart.
 */
export type PageHub = 'running' | 'started' | 'failed';

export interface PageHubDeps {
  /** Whether something answers on the hub's port now. */
  listening(): Promise<boolean>;
  /** Starts `elicitly-companion hub` detached, on this state dir and port. */
  spawn(): void;
  pause(ms: number): Promise<void>;
  attempts?: number;
  pauseMs?: number;
}

export async function ensurePageHub(deps: PageHubDeps): Promise<PageHub> {
  if (await deps.listening()) return 'running';
  deps.spawn();
  const attempts = deps.attempts ?? 50;
  for (let i = 0; i < attempts; i++) {
    await deps.pause(deps.pauseMs ?? 100);
    if (await deps.listening()) return 'started';
  }
  return 'failed';
}

/** What the person reads about it, after the page's address. */
export function pageHubText(hub: PageHub, port: number): string {
  if (hub === 'running') return `The hub runs on port ${port}: the page is live.`;
  if (hub === 'started') {
    return `Started the hub on port ${port} in the background (\`elicitly-companion hub\`): it serves the page while the page is on, and stops once idle after \`elicitly-companion remote disable\`.`;
  }
  return `No hub answers on port ${port} and one could not be started: the page works only while a hub runs. Run \`elicitly-companion hub\` in a terminal (or start an agent that uses this server), then open the link.`;
}
