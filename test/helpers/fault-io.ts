import type { StoreIo } from '../../server/store/journal-store.js';

/** A store fsync the test holds: `hold()` makes the next fsyncs wait until `release()`; `fail()` makes them throw EIO. */
export class FaultIo implements StoreIo {
  syncs = 0;
  private held: Promise<void> | null = null;
  private open: () => void = () => undefined;
  private failing = false;
  private waiting: (() => void)[] = [];
  private parked = 0;

  hold(): void {
    this.held = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open();
    this.held = null;
  }

  fail(): void {
    this.failing = true;
  }

  /** Resolves once an fsync is waiting on the hold (bounded). */
  async blocked(timeoutMs = 2000): Promise<void> {
    if (this.held === null) throw new Error('not holding');
    if (this.parked > 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no fsync reached the hold within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  readonly sync: StoreIo['sync'] = async (handle) => {
    this.syncs += 1;
    if (this.held) {
      this.parked += 1;
      for (const wake of this.waiting.splice(0)) wake();
      await this.held;
      this.parked -= 1;
    }
    if (this.failing) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    await handle.sync();
  };
}
