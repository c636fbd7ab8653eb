// A full collection once a burst of work is over (server/burst-collector.ts): not during it, not for a little work,
// once per burst, and never after stop().
import { afterEach, describe, expect, it, vi } from 'vitest';
import { burstCollector, fullCollection } from '../../server/burst-collector.js';

describe('burstCollector', () => {
  afterEach(() => vi.useRealTimers());

  it('collects once the burst has been quiet for quietMs, once per burst', async () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const { work } = burstCollector({ threshold: 3, quietMs: 200, collect });
    for (let i = 0; i < 10; i++) {
      work();
      await vi.advanceTimersByTimeAsync(150);
    }
    // Still working: pushed back at every unit.
    expect(collect).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(60);
    expect(collect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(collect).toHaveBeenCalledTimes(1);
    // A new burst is counted from zero.
    work();
    work();
    await vi.advanceTimersByTimeAsync(1000);
    expect(collect).toHaveBeenCalledTimes(1);
    work();
    await vi.advanceTimersByTimeAsync(200);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('does nothing for less work than the threshold, and nothing after stop', async () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const small = burstCollector({ threshold: 5, quietMs: 10, collect });
    for (let i = 0; i < 4; i++) small.work();
    await vi.advanceTimersByTimeAsync(1000);
    expect(collect).not.toHaveBeenCalled();
    const stopped = burstCollector({ threshold: 1, quietMs: 10, collect });
    stopped.work();
    stopped.stop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(collect).not.toHaveBeenCalled();
  });

  it('fullCollection frees what nothing holds any more', async () => {
    let collected = false;
    const registry = new FinalizationRegistry(() => (collected = true));
    (() => registry.register({ garbage: new Array(1000).fill('x') }, 'garbage'))();
    fullCollection();
    // The finalizer runs in a later task once the object is gone.
    await vi.waitFor(() => expect(collected).toBe(true), { timeout: 2000, interval: 10 });
  });
});
