import { liveQuery } from 'dexie';
import { useEffect, useState } from 'preact/hooks';

/**
 * The result of a Dexie query, re-run whenever the tables it read change, including writes made by the service
 * worker (Dexie propagates those across the extension's contexts). Undefined until the first result; the previous
 * result stays on screen while a re-query for new deps runs, so filters do not flash an empty page.
 */
export function useLiveQuery<T>(query: () => Promise<T> | T, deps: unknown[]): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  useEffect(() => {
    const subscription = liveQuery(query).subscribe({
      // The updater form, so a T that happens to be a function is stored rather than called.
      next: (result) => setValue(() => result),
      error: (error: unknown) => console.error('elicitly: a live query failed', error),
    });
    return () => subscription.unsubscribe();
    // The caller's deps decide when the query is a different one.
  }, deps);
  return value;
}
