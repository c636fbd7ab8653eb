import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EXTENSION_ID, EXTENSION_PUBLIC_KEY } from '../../shared/extension-id.js';

describe('the pinned extension id', () => {
  it('is the id Chrome derives from the committed manifest key', () => {
    const hex = createHash('sha256').update(Buffer.from(EXTENSION_PUBLIC_KEY, 'base64')).digest('hex').slice(0, 32);
    const id = [...hex].map((h) => String.fromCharCode(97 + parseInt(h, 16))).join('');
    expect(id).toBe(EXTENSION_ID);
  });
});
