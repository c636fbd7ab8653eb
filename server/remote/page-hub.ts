/**
 * The phone page is served by the hub, so its link works only while one runs. `remote enable` and `remote pair` make
 * sure one does: already there, or started in the background (`elicitly-companion hub`, which stays while the page is
 * on). Bounded: it looks for the new hub at most `attempts` times, `pauseMs` apart.
 */
export type PageHub = 'running' | 'started' | 'failed' | 'other';

export interface PageHubDeps {
  /** Who answers on the hub's port now: this computer's hub (it proved the install key), something else, or nothing. */
  probe(): Promise<'hub' | 'other' | 'none'>;
  /** Starts `elicitly-companion hub` detached, on this state dir and port. */
  spawn(): void;
  pause(ms: number): Promise<void>;
  attempts?: number;
  pauseMs?: number;
}

export async function ensurePageHub(deps: PageHubDeps): Promise<PageHub> {
  const first = await deps.probe();
  if (first === 'hub') return 'running';
  // Nothing there: start one. Something there that is not (yet) a hub: a hub still opening its store answers so for a
  // moment, so it is looked at again; another program holding the port stays 'other', and nothing is started.
  if (first === 'none') deps.spawn();
  let last: 'hub' | 'other' | 'none' = first;
  // Each look at a port that holds something else can take the handshake's whole timeout: a few are enough there.
  const looks = first === 'none' ? (deps.attempts ?? 50) : Math.min(3, deps.attempts ?? 3);
  for (let i = 0; i < looks; i++) {
    await deps.pause(deps.pauseMs ?? 100);
    last = await deps.probe();
    if (last === 'hub') return first === 'none' ? 'started' : 'running';
  }
  return last === 'other' ? 'other' : 'failed';
}

/** What the person reads about it, after the page's address. */
export function pageHubText(hub: PageHub, port: number): string {
  if (hub === 'running') return `The hub runs on port ${port}: the page is live.`;
  if (hub === 'other') {
    return `Something that is not this computer's hub answers on port ${port}, so the page cannot be served there: stop it, or use another port (ELICITLY_PORT, or --port) for the hub and the page.`;
  }
  if (hub === 'started') {
    return `Started the hub on port ${port} in the background (\`elicitly-companion hub\`): it serves the page while the page is on, and stops once idle after \`elicitly-companion remote disable\`.`;
  }
  return `No hub answers on port ${port} and one could not be started: the page works only while a hub runs. Run \`elicitly-companion hub\` in a terminal (or start an agent that uses this server), then open the link.`;
}
