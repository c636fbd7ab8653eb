import * as z from 'zod';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';
import { isKeyHex } from '../../shared/hub-auth.js';
import { KeyIdSchema } from '../../shared/wire-fields.js';

// The person's settings (one record in the `settings` table) and the hub keys they hold; the rows of requests, the
// outbox and the connection's state are in rows.ts.

/** The key a hub handed this browser when it paired; both sides prove it on every connection, it never travels. */
export const HubKeySchema = z.strictObject({
  keyId: KeyIdSchema,
  key: z.string().refine(isKeyHex, 'must be 64 lowercase hex digits'),
});
export type HubKey = z.infer<typeof HubKeySchema>;

export const SettingsSchema = z.strictObject({
  port: z.number().int().min(1024).max(65535),
  /** A code from `elicitly-companion pair` the person entered, kept only until the hub accepts or refuses it. */
  pairingCode: z.string().max(200),
  notifications: z.boolean(),
  retentionDays: z.number().int().min(1).max(3650),
  /**
   * One key per hub port. A damaged map is dropped rather than taking the other settings with it: the header then
   * asks to pair again, which is the safe way to fail.
   */
  hubKeys: z.record(z.string().regex(/^\d+$/), HubKeySchema).catch({}),
});
export type Settings = z.infer<typeof SettingsSchema>;
export const DEFAULT_SETTINGS: Settings = { port: DEFAULT_HUB_PORT, pairingCode: '', notifications: true, retentionDays: 90, hubKeys: {} };

export function hubKeyFor(settings: Settings, port: number): HubKey | null {
  return settings.hubKeys[String(port)] ?? null;
}
