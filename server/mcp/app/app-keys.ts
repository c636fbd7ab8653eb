import { randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyCheck = 'ok' | 'token_missing' | 'token_invalid' | 'token_spent' | 'not_in_app';

/**
 * The single-use keys that let the review rendered inside the chat decide, one per request this connection created
 * for the app. A key travels only in a creating tool's result `_meta` (which hosts hand the view, not the model), is
 * bound to its request, and is spent by the decision it made: a model or script on the same connection that sees only
 * `content` and `structuredContent` has no key, so it cannot approve its own request.
 */
export class AppKeys {
  private readonly keys = new Map<string, { key: Buffer; spent: boolean }>();

  mint(elicitationId: string): string {
    const key = randomBytes(32);
    this.keys.set(elicitationId, { key, spent: false });
    return key.toString('base64url');
  }

  /** Whether this request was created for the app on this connection (its review may be shown here). */
  has(elicitationId: string): boolean {
    return this.keys.has(elicitationId);
  }

  check(elicitationId: string, token: string | undefined): KeyCheck {
    const entry = this.keys.get(elicitationId);
    if (!entry) return 'not_in_app';
    if (token === undefined || token === '') return 'token_missing';
    const given = Buffer.from(token, 'base64url');
    if (given.length !== entry.key.length || given.toString('base64url') !== token || !timingSafeEqual(given, entry.key)) return 'token_invalid';
    return entry.spent ? 'token_spent' : 'ok';
  }

  spend(elicitationId: string): void {
    const entry = this.keys.get(elicitationId);
    if (entry) entry.spent = true;
  }
}
