// Which WebAuthn relying party each surface's origin can be, measured in docs/passkeys-research.md: the Chrome
// extension has its own RP ID (its origin); Firefox's extension borrows `elicitly.localhost` through a host permission
// and signs with an origin derived from its gecko id; a page can use its host name, except an IP address.
import { createHash } from 'node:crypto';
import { EXTENSION_ORIGIN, FIREFOX_EXTENSION_ID } from '../../shared/extension-id.js';

/** The RP ID the Firefox extension and the hub's own page on this computer share: one passkey serves both. */
export const LOCAL_RP_ID = 'elicitly.localhost';

/**
 * The stable origin Firefox puts in an extension's `clientDataJSON`: one letter a–p per hex digit of SHA-256 of the
 * extension id (MDN, "Use the WebAuthn API"; checked against Firefox 153 in the research).
 */
export function firefoxWebAuthnOrigin(extensionId: string): string {
  const digest = createHash('sha256').update(extensionId, 'utf8').digest('hex');
  return `moz-extension://${[...digest].map((d) => String.fromCharCode(97 + parseInt(d, 16))).join('')}`;
}

export type RelyingParty = { ok: true; rpId: string; origin: string } | { ok: false; why: string };

/** The RP ID and the `clientDataJSON` origin a socket of this proven origin registers and asserts with. */
export function relyingPartyOf(origin: string): RelyingParty {
  if (origin === EXTENSION_ORIGIN) return { ok: true, rpId: origin, origin };
  if (origin.startsWith('moz-extension://')) return { ok: true, rpId: LOCAL_RP_ID, origin: firefoxWebAuthnOrigin(FIREFOX_EXTENSION_ID) };
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return { ok: false, why: `${origin} is not an origin` };
  }
  const host = url.hostname;
  if (/^[\d.]+$/.test(host) || host.startsWith('[')) {
    return { ok: false, why: `passkeys cannot be used on an IP address (${host}): open the page as http://${LOCAL_RP_ID}:${url.port || '80'}/phone/ instead` };
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && (host === 'localhost' || host.endsWith('.localhost')))) return { ok: true, rpId: host, origin };
  return { ok: false, why: `passkeys need an https origin or localhost, not ${origin}` };
}
