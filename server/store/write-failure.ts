/**
 * A store's first write failure. After a failed write or fsync the kernel may have dropped the pages, so a retry could
 * claim durability it does not have: the store refuses every later write, and its owner (told once) steps down and
 * reopens it from disk. The journal and the rules file share it.
 */
export class WriteFailure {
  private error: Error | undefined;
  private readonly listeners = new Set<(error: Error) => void>();

  /** The write error that made the store refuse further writes, if any. */
  get failed(): Error | undefined {
    return this.error;
  }

  /** Called once, when a write or fsync fails: the store is unusable from then on and its owner must step down. */
  onFailure(listener: (error: Error) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Records the first failure and tells the listeners; true when this was it (a later one changes nothing). */
  record(error: Error): boolean {
    if (this.error) return false;
    this.error = error;
    for (const listener of this.listeners) listener(error);
    return true;
  }
}
