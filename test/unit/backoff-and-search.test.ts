import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../kit/core/backoff.js';
import { searchWords } from '../../kit/core/search-words.js';

describe('backoffDelay', () => {
  it.each([
    [0, 0, 500], [0, 1, 1000], [1, 0, 1000], [1, 1, 2000], [2, 0.5, 3000], [4, 1, 16000],
    [5, 1, 30000], [5, 0, 15000], [40, 1, 30000], [-3, 1, 1000],
  ])('attempt %i with random %f waits %i ms', (attempt, r, expected) => {
    expect(backoffDelay(attempt, () => r)).toBe(expected);
  });
});

describe('searchWords', () => {
  it.each([
    ['Sync NorthMark Strategies from Apollo', ['sync', 'northmark', 'strategies', 'from', 'apollo']],
    ['Deploy v2.1 to prod? prod!', ['deploy', 'v2', '1', 'to', 'prod']],
    ['Ünïcode Straße', ['ünïcode', 'straße']],
    ['   ', []],
    ['<script>alert(1)</script>', ['script', 'alert', '1']],
  ])('%j → %j', (text, words) => {
    expect(searchWords(text)).toEqual(words);
  });

  it('keeps at most 200 distinct words', () => {
    expect(searchWords(Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '))).toHaveLength(200);
  });
});
