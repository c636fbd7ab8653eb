/**
 * Reconnect delays: 1 s doubling to 30 s, with full jitter over the upper half so that a browser restart with many
 * profiles, or many extensions, does not reconnect in lockstep. `random` is injected for table tests.
 */
const BACKOFF = { initialMs: 1000, maxMs: 30_000 } as const;

export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF.maxMs, BACKOFF.initialMs * 2 ** Math.max(0, Math.min(attempt, 30)));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
