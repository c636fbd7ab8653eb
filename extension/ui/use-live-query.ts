import { liveQuery, type Observer, type Subscription } from 'dexie';
import { useLayoutEffect, useState } from 'preact/hooks';

export interface LiveQueryOptions<T> {
  /** What is already known (the row the inbox showed), shown until the first read has what is stored. */
  initial?: T;
}

/**
 * Subscribes with the first read started now. Dexie's liveQuery starts it with setTimeout(…, 0), and Chrome runs that
 * timeout after the next frame: 5–15 ms more before a view opened by a click has its data. For the one synchronous call
 * that subscribes, a zero-delay timeout runs as a microtask instead; everything else about the live query (the ranges
 * it watches, Dexie's cache of recent results) stays Dexie's.
 */
function subscribeNow<T>(query: () => Promise<T> | T, observer: Partial<Observer<T>>): Subscription {
  const later = globalThis.setTimeout;
  globalThis.setTimeout = Object.assign((handler: TimerHandler, delay?: number, ...args: unknown[]) => {
    if (delay || typeof handler !== 'function') return later(handler, delay, ...args);
    queueMicrotask(() => handler(...args));
    return 0;
  }, later);
  try {
    return liveQuery(query).subscribe(observer);
  } finally {
    globalThis.setTimeout = later;
  }
}

/**
 * Plain data (arrays, plain objects, primitives: what a read and its parse return) compared by value, so a re-read that
 * found the same is not a new result. Anything else (a Map) is new unless it is the same object.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameData(x, b[i]));
  if (Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The result of a Dexie query, re-run whenever the tables it read change, including writes made by the service
 * worker (Dexie propagates those across the extension's contexts). Undefined until the first result (or `initial`);
 * the previous result stays on screen while a re-query for new deps runs, so filters do not flash an empty page. A
 * re-read that finds what is already shown changes nothing, so it renders nothing.
 */
export function useLiveQuery<T>(query: () => Promise<T> | T, deps: unknown[], options: LiveQueryOptions<T> = {}): T | undefined {
  const [value, setValue] = useState<T | undefined>(options.initial);
  // Subscribed with the render that needs it, not after the next paint (useEffect).
  useLayoutEffect(() => {
    const subscription = subscribeNow(query, {
      // The updater form, so a T that happens to be a function is stored rather than called.
      next: (result) => setValue((shown) => (sameData(shown, result) ? shown : result)),
      error: (error: unknown) => console.error('elicitly: a live query failed', error),
    });
    return () => subscription.unsubscribe();
    // The caller's deps decide when the query is a different one.
  }, deps);
  return value;
}
