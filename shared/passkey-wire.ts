// The shapes of passkeys on the wire and on disk (zod only): what the hub protocol, the journal's outcomes and the
// pages share. The hashing that binds a passkey to a decision is `passkey.ts`, loaded only where a ceremony happens.
import * as z from 'zod';

/**
 * What needs a passkey by the person's setting: requests of a kind (or all), and `rules`: saving a rule (in the Rules
 * view, approved with a passkey; a decision's "Always allow…" is refused then). Removing or ending a rule never needs
 * one: that only brings a question back to the person.
 */
export const PASSKEY_SCOPES = ['permission', 'proposal', 'everything', 'rules'] as const;
export const PasskeyScopeSchema = z.enum(PASSKEY_SCOPES);
export type PasskeyScope = z.infer<typeof PasskeyScopeSchema>;

/** How a request must be decided: `passkey`, only with an assertion from a registered passkey. */
export const AssuranceSchema = z.literal('passkey');
export type Assurance = z.infer<typeof AssuranceSchema>;

const Base64UrlSchema = z.string().min(1).max(8192).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
/** A credential id: base64url, as WebAuthn's JSON forms carry it. */
export const CredentialIdSchema = Base64UrlSchema.max(1400);

/** What a browser's `PublicKeyCredential.toJSON()` gives for an assertion (`navigator.credentials.get`). */
export const AssertionSchema = z.looseObject({
  id: CredentialIdSchema,
  rawId: CredentialIdSchema,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: Base64UrlSchema,
    authenticatorData: Base64UrlSchema,
    signature: Base64UrlSchema,
    userHandle: Base64UrlSchema.nullable().optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
  authenticatorAttachment: z.string().max(40).nullable().optional(),
});
export type Assertion = z.infer<typeof AssertionSchema>;

/** What a browser's `PublicKeyCredential.toJSON()` gives for a new passkey (`navigator.credentials.create`). */
export const RegistrationSchema = z.looseObject({
  id: CredentialIdSchema,
  rawId: CredentialIdSchema,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: Base64UrlSchema,
    attestationObject: Base64UrlSchema,
    transports: z.array(z.string().max(40)).max(10).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
  authenticatorAttachment: z.string().max(40).nullable().optional(),
});
export type Registration = z.infer<typeof RegistrationSchema>;

export const PasskeyLabelSchema = z.string().trim().min(1).max(60).regex(/^[^\p{Cc}]*$/u, 'must not hold control characters');

/** A registered passkey as surfaces see it: never its key, only what names it. */
export const PasskeySummarySchema = z.strictObject({
  id: CredentialIdSchema,
  label: PasskeyLabelSchema,
  rpId: z.string().min(1).max(300),
  createdAt: z.number().int().nonnegative(),
  /** SHA-256 of the public key (SPKI DER), hex: what a person pins to check receipts without trusting the hub. */
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PasskeySummary = z.infer<typeof PasskeySummarySchema>;

/**
 * What a surface needs for a ceremony: the hub's ledger key id (bound into every challenge, so an assertion made for
 * one hub means nothing to another), the person's setting, the registered passkeys, and the RP ID this surface uses.
 */
export const PasskeyInfoSchema = z.strictObject({
  hub: z.string().regex(/^[0-9a-f]{16}$/),
  require: z.array(PasskeyScopeSchema).max(PASSKEY_SCOPES.length),
  passkeys: z.array(PasskeySummarySchema).max(20),
  /** The RP ID this caller's origin registers and asserts with; null: its origin cannot use WebAuthn (say why). */
  rpId: z.string().max(300).nullable(),
  why: z.string().max(300).optional(),
});
export type PasskeyInfo = z.infer<typeof PasskeyInfoSchema>;


/**
 * A decision's passkey, as the hub keeps it in the outcome, the ledger and the receipt: the assertion's signed parts,
 * which anyone holding the passkey's public key can check without the hub (`audit verify --receipt`).
 */
export const PasskeyEvidenceSchema = z.strictObject({
  credentialId: CredentialIdSchema,
  rpId: z.string().min(1).max(300),
  origin: z.string().min(1).max(300),
  authenticatorData: Base64UrlSchema,
  clientDataJSON: Base64UrlSchema,
  signature: Base64UrlSchema,
});
export type PasskeyEvidence = z.infer<typeof PasskeyEvidenceSchema>;
