import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

describe('finding 18: docs/protocol.md names the protocol the code speaks', () => {
  it('the stated version is PROTOCOL_VERSION', () => {
    expect(/Protocol version: \*\*(\d+)\*\*/.exec(doc)?.[1]).toBe(String(PROTOCOL_VERSION));
  });

  it('every hello and welcome it shows carries PROTOCOL_VERSION', () => {
    const shown = [...doc.matchAll(/`(hello|welcome) \{ protocol: (\d+)/g)].map((m) => [m[1], Number(m[2])]);
    expect(shown).toEqual([
      ['hello', PROTOCOL_VERSION],
      ['welcome', PROTOCOL_VERSION],
    ]);
  });

  it('the proofs it shows are the ones shared/hub-auth.ts makes: bound to the protocol and the port', () => {
    const source = readFileSync(new URL('../../shared/hub-auth.ts', import.meta.url), 'utf8');
    for (const label of ['elicitly hub v2|', 'elicitly peer v2|', 'elicitly seal v2|']) {
      expect(source).toContain(label);
      expect(doc).toContain(`${label}<protocol>|<port>|`);
    }
  });
});
