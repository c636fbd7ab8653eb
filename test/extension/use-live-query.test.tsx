// The views' live queries: the first read starts with the render (not after a timer, which the browser runs after the
// next frame), a value already known shows at once, and a re-read that finds the same renders nothing.
import { act, render, screen, waitFor } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { sameData, useLiveQuery } from '../../extension/ui/use-live-query.js';
import { freshDb } from './fakes.js';

let db: ElicitlyDb;
beforeEach(() => {
  db = freshDb();
});
afterEach(() => db.close());

interface Shown { rules: number }

function Count({ query, initial, onRender }: { query: () => Promise<Shown>; initial?: Shown; onRender(value: Shown | undefined): void }) {
  const value = useLiveQuery(query, [], { initial });
  onRender(value);
  return <p>{value === undefined ? 'loading' : `${value.rules} rules`}</p>;
}

describe('useLiveQuery', () => {
  it('starts the first read with the render, without waiting for a timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
    try {
      const query = vi.fn(async () => ({ rules: await db.rules.count() }));
      render(<Count query={query} onRender={() => undefined} />);
      await Promise.resolve();
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
    expect(await screen.findByText('0 rules')).toBeTruthy();
  });

  it('shows a known value at once, keeps it when the read finds the same, and follows writes', async () => {
    const renders: (Shown | undefined)[] = [];
    const known = { rules: 0 };
    render(<Count query={async () => ({ rules: await db.rules.count() })} initial={known} onRender={(v) => renders.push(v)} />);
    expect(screen.getByText('0 rules')).toBeTruthy();
    // The read found what was known: nothing new to show, so no second render.
    await act(() => new Promise((resolve) => setTimeout(resolve, 50)));
    expect(renders).toEqual([known]);
    // Any row will do for a count; the table takes what it is given.
    await db.table('rules').put({ id: 'r1' });
    await waitFor(() => expect(screen.getByText('1 rules')).toBeTruthy());
  });
});

describe('sameData', () => {
  it('compares plain data by value, and anything else by identity', () => {
    expect(sameData({ a: [1, { b: 'x' }], c: null }, { a: [1, { b: 'x' }], c: null })).toBe(true);
    expect(sameData({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameData({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameData([], {})).toBe(false);
    expect(sameData(new Map([['k', 1]]), new Map([['k', 1]]))).toBe(false);
    expect(sameData(Number.NaN, Number.NaN)).toBe(true);
    expect(sameData(new Date(1), new Date(1))).toBe(false);
  });
});
