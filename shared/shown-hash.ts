// What a reviewer was shown, as one hash: the request as stored and relayed (its message, context, fields, proposal
// rows with their sources, labels) and the template rendered from it. Every surface computes it from the view it
// renders and sends it with its decision; the hub refuses a decision whose hash is not the stored request's
// (`shown_mismatch`), so what was decided is what was on the screen. The same text is what the hub's ledger hashes.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import canonicalize from 'canonicalize';
import type { ReviewRequest } from './review-request.js';

/** The canonical JSON (RFC 8785) of what a reviewer renders. */
export function shownText(view: { request: ReviewRequest; renderedTemplate: string | null }): string {
  const text = canonicalize({ request: view.request, renderedTemplate: view.renderedTemplate });
  if (text === undefined) throw new Error('a request that is not JSON');
  return text;
}

/**
 * SHA-256 of `shownText`, in hex. Computed in JavaScript (@noble/hashes), not WebCrypto: a chat host may show the
 * view in a page that is not a secure context, where `crypto.subtle` does not exist.
 */
export async function shownHash(view: { request: ReviewRequest; renderedTemplate: string | null }): Promise<string> {
  return bytesToHex(sha256(new TextEncoder().encode(shownText(view))));
}
