// A full garbage collection once a burst of work is over. A burst of creates (an agent filing thousands of requests)
// leaves the hub's old generation full of garbage that V8 collects only when it next needs room, so the memory of the
// burst stays with the process: 10,000 creates left the hub at 145 MiB 0.5 s later, its old generation 62 MiB with 17
// MiB alive. One collection freed the objects but not yet the pages (138 MiB); a second one, right after, gives the
// pages back: 102 MiB. The pause (two full collections, ~55 ms with 10,000 pending) falls in a quiet moment.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface BurstCollectorOptions {
  /** How much work makes a burst worth a collection. */
  threshold?: number;
  /** How long the work must have stopped before collecting. */
  quietMs?: number;
  /** The collection (a seam for tests). */
  collect?: () => void;
}

const THRESHOLD = 1000;
const QUIET_MS = 200;

/**
 * Two of V8's full collections (the second releases the pages the first emptied), without starting node with
 * --expose-gc: the flag is set now, and a new context has `gc`.
 */
export function fullCollection(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

/**
 * Returns what to call for each unit of work, and what stops it. Once at least `threshold` units came and none for
 * `quietMs`, it collects and counts again from zero. The timer keeps no process alive.
 */
export function burstCollector(options: BurstCollectorOptions = {}): { work: () => void; stop: () => void } {
  const threshold = options.threshold ?? THRESHOLD;
  const quietMs = options.quietMs ?? QUIET_MS;
  const collect = options.collect ?? fullCollection;
  let count = 0;
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    timer = undefined;
    if (count < threshold) return;
    count = 0;
    collect();
  };
  return {
    work: () => {
      count += 1;
      if (count < threshold) return;
      // Past the threshold each unit pushes the collection back: it comes when the burst is over, not during it.
      if (timer) timer.refresh();
      else timer = setTimeout(fire, quietMs).unref();
    },
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
