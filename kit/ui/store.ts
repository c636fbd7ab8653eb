import { useEffect, useState } from 'preact/hooks';

/**
 * One value that changes from outside Preact (the chat host's messages, the phone's hub connection), read by
 * components. The chat host's tool result and context arrive through listeners that must exist before `connect()`,
 * which is before anything renders.
 */
export class Store<T> {
  private value: T;
  private readonly listeners = new Set<() => void>();

  constructor(initial: T) {
    this.value = initial;
  }

  get(): T {
    return this.value;
  }

  set(next: T): void {
    this.value = next;
    for (const listener of this.listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(() => store.get());
  useEffect(() => {
    // A change between the first render and this effect is read here rather than missed.
    setValue(() => store.get());
    return store.subscribe(() => setValue(() => store.get()));
  }, [store]);
  return value;
}
