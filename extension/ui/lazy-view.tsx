import type { FunctionComponent } from 'preact';
import { useLayoutEffect, useState } from 'preact/hooks';

/** A lazily loaded view, which can be fetched ahead of its first use. */
export interface LazyView<P> extends FunctionComponent<P> {
  /** Loads the module now (once), so the view shows at once when it is opened. */
  prefetch(): void;
}

/**
 * A view loaded on first use: settings and the first-run page are rare, and the popup opens faster without them
 * (its bundle has a size goal). Until the module arrives the view says so, in the same place.
 */
export function lazyView<P extends object>(load: () => Promise<FunctionComponent<P>>): LazyView<P> {
  let loaded: FunctionComponent<P> | undefined;
  let loading: Promise<FunctionComponent<P>> | undefined;
  const start = () => (loading ??= load().then(
    (component) => (loaded = component),
    (error: unknown) => {
      // A failed import (the extension was updated under the page) is tried again next time, not remembered.
      loading = undefined;
      throw error;
    },
  ));
  const LazyView = (props: P) => {
    const [View, setView] = useState<FunctionComponent<P> | undefined>(() => loaded);
    // With the render, not after the next paint: the import is under way a frame sooner.
    useLayoutEffect(() => {
      if (View) return;
      let live = true;
      void start().then((component) => {
        if (live) setView(() => component);
      });
      return () => {
        live = false;
      };
    }, [View]);
    return View ? <View {...props} /> : <p class="muted" role="status">Loading…</p>;
  };
  return Object.assign(LazyView, { prefetch: () => void start().catch(() => undefined) });
}

/**
 * Fetches views' modules once the page has nothing else to do (the popup has painted what it opened on), so the views
 * it most likely opens next are there when asked for: dynamic imports, which keep them out of the popup's bundle.
 */
export function prefetchWhenIdle(...views: { prefetch(): void }[]): () => void {
  const prefetch = () => views.forEach((view) => view.prefetch());
  if (typeof requestIdleCallback === 'function') {
    const handle = requestIdleCallback(prefetch, { timeout: 2000 });
    return () => cancelIdleCallback(handle);
  }
  const timer = setTimeout(prefetch, 200);
  return () => clearTimeout(timer);
}
