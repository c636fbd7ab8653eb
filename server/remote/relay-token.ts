import * as z from 'zod';

/**
 * What `elicitly-companion key export` prints and `ELICITLY_HUB_KEY` holds on the other machine: everything a relay
 * there needs besides the hub's URL, in one copyable word. The port is the hub's own (its proofs are bound to it), not
 * the one the tunnel ends at on the other machine; the key id tells the hub which exported key to check.
 */
export interface RelayToken {
  port: number;
  keyId: string;
  key: string;
}

const VERSION = 'ek1';
const TOKEN = /^ek1\.(\d{1,5})\.(k_[0-9a-f]{16})\.([0-9a-f]{64})$/;

export function formatRelayToken(token: RelayToken): string {
  return `${VERSION}.${token.port}.${token.keyId}.${token.key}`;
}

export const RelayTokenSchema = z.string().transform((value, ctx): RelayToken => {
  const match = TOKEN.exec(value.trim());
  const port = Number(match?.[1]);
  if (!match || !(port >= 1 && port <= 65_535)) {
    // Never echo the value: it is a secret.
    ctx.addIssue({ code: 'custom', message: `must be the token \`elicitly-companion key export\` printed (${VERSION}.<port>.<key id>.<64 hex digits>)` });
    return z.NEVER;
  }
  return { port, keyId: match[2] ?? '', key: match[3] ?? '' };
});

/** The hub a relay-only process joins: `ELICITLY_HUB_URL`, a ws:// or wss:// URL (a tunnel's end, or the hub itself). */
export const HubUrlSchema = z.string().max(500).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'ws:' || url.protocol === 'wss:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}, 'must be a ws:// or wss:// URL, e.g. wss://desk.tail1234.ts.net or ws://127.0.0.1:8765 at the end of an SSH tunnel');
