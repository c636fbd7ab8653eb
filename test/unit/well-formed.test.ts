import { describe, expect, it } from 'vitest';
import { notUnicodeIssue } from '../../shared/well-formed.js';

const lone = (hex: string) => JSON.parse(`"\\u${hex}"`) as string;

describe('notUnicodeIssue: text with no canonical form (a lone surrogate) is named by its path', () => {
  it.each<[string, unknown, string | null]>([
    ['plain text', { a: 'hello', b: ['ok', 1, null, true] }, null],
    ['a surrogate pair (an emoji) is text', { a: '😀 ok' }, null],
    ['a lone high surrogate', { a: `x${lone('d800')}` }, 'a'],
    ['a lone low surrogate', { list: ['fine', `${lone('dc00')}y`] }, 'list[1]'],
    ['a high surrogate at the very end', { a: `end${lone('dbff')}` }, 'a'],
    ['two high surrogates in a row', { a: `${lone('d800')}${lone('d800')}${lone('dc00')}` }, 'a'],
    ['in a key', { ok: { [`k${lone('d800')}`]: 1 } }, 'ok'],
    ['deep inside', { a: { b: [{ c: lone('dfff') }] } }, 'a.b[0].c'],
  ])('%s', (_name, value, path) => {
    const found = notUnicodeIssue(value);
    if (path === null) expect(found).toBeNull();
    // A key is named by the object that holds it and the key itself, so the path starts there.
    else expect(found).toMatchObject({ rule: 'unicode', path: expect.stringMatching(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}`)) });
  });
});
