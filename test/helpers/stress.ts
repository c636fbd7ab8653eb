/**
 * How hard the stress tests push: `npm test` runs a small version of each (the same assertions, fewer rounds), and
 * `npm run stress` (ELICITLY_STRESS=1) the full one. The small one still fails on the bug each guards against; the full
 * one is for the rarer interleavings, run before a release and when the code under it changes.
 */
export const STRESS = process.env.ELICITLY_STRESS === '1';

/** `full` under `npm run stress`, `small` otherwise. */
export const stressScale = <T>(small: T, full: T): T => (STRESS ? full : small);
