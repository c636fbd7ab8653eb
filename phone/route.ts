/**
 * Where the page is, from its fragment (which never reaches a server): `#pair=<code>&n=<serial>` from the QR code, a review link
 * `#/r/<elicitationId>` (a notification's), the history, or the inbox (anything else).
 */
export type Route = { view: 'pair'; code: string; serial: number | null } | { view: 'review'; id: string } | { view: 'history' } | { view: 'passkeys' } | { view: 'inbox' };

export function parseRoute(hash: string): Route {
  const pair = /^#pair=([^&]+)(?:&n=([1-9]\d{0,8}))?$/.exec(hash);
  if (pair?.[1]) return { view: 'pair', code: safeDecode(pair[1]), serial: pair[2] ? Number(pair[2]) : null };
  const review = /^#\/r\/(.+)$/.exec(hash);
  if (review?.[1]) return { view: 'review', id: safeDecode(review[1]) };
  if (hash === '#/history') return { view: 'history' };
  if (hash === '#/passkeys') return { view: 'passkeys' };
  return { view: 'inbox' };
}

export function reviewHash(id: string): string {
  return `#/r/${encodeURIComponent(id)}`;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
