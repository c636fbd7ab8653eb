import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A view loaded on first use: settings and the first-run page are rare, and the popup opens faster without them
 * (its bundle has a size goal). Until the module arrives the view says so, in the same place.
 */
export function lazyView<P extends object>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | undefined;
  return function LazyView(props: P) {
    const [View, setView] = useState<FunctionComponent<P> | undefined>(() => loaded);
    useEffect(() => {
      if (View) return;
      let live = true;
      void load().then((component) => {
        loaded = component;
        if (live) setView(() => component);
      });
      return () => {
        live = false;
      };
    }, [View]);
    return View ? <View {...props} /> : <p class="muted" role="status">Loading…</p>;
  };
}
