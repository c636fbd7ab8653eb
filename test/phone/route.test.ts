// The phone page's routes, from its fragment: the QR link's code and serial (issue 35, part 4).
import { describe, expect, it } from 'vitest';
import { parseRoute } from '../../phone/route.js';

describe('parseRoute', () => {
  it.each([
    ['#pair=abcdefabcdef', { view: 'pair', code: 'abcdefabcdef', serial: null }],
    ['#pair=abcdefabcdef&n=3', { view: 'pair', code: 'abcdefabcdef', serial: 3 }],
    // A serial that is not a positive number is not one: the whole fragment is no pairing link.
    ['#pair=abcdefabcdef&n=0', { view: 'inbox' }],
    ['#pair=abcdefabcdef&n=x', { view: 'inbox' }],
    ['#/r/el_1', { view: 'review', id: 'el_1' }],
    ['#/history', { view: 'history' }],
    ['', { view: 'inbox' }],
  ])('%s', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });
});
