import { describe, expect, it } from 'vitest';
import { age, timeLeft } from '../../kit/ui/format-time.js';

const NOW = 1_700_000_000_000;
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

describe('age', () => {
  const rows: [number, string][] = [
    [0, 'just now'],
    [59 * S, 'just now'],
    [-5 * S, 'just now'], // a clock a little ahead of ours
    [MIN, '1 min ago'],
    [3 * MIN + 59 * S, '3 min ago'],
    [59 * MIN, '59 min ago'],
    [H, '1 h ago'],
    [2 * H + 30 * MIN, '2 h ago'],
    [23 * H + 59 * MIN, '23 h ago'],
    [D, '1 d ago'],
    [4 * D + 5 * H, '4 d ago'],
  ];
  it.each(rows)('%i ms ago → %s', (elapsed, expected) => {
    expect(age(NOW - elapsed, NOW)).toBe(expected);
  });
});

describe('timeLeft', () => {
  const rows: [number, string][] = [
    [-H, 'expired'],
    [0, 'expired'],
    [1, 'expires in 1 s'],
    [45 * S, 'expires in 45 s'],
    [MIN, 'expires in 1 min'],
    [58 * MIN + 59 * S, 'expires in 58 min'],
    [H, 'expires in 1 h'],
    [23 * H + 59 * MIN, 'expires in 23 h'],
    [D, 'expires in 1 d'],
    [3 * D + H, 'expires in 3 d'],
  ];
  it.each(rows)('%i ms left → %s', (left, expected) => {
    expect(timeLeft(NOW + left, NOW)).toBe(expected);
  });
});
