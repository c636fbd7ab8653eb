// A team's reviewers (issue 39): people by name, in groups. A paired extension or phone belongs to one, and every
// decision made there records the name (`decidedBy`). No reviewer at all is the single person's hub, as before.
import * as z from 'zod';

/** A person's name as the team writes it: letters and digits of any script, with spaces and . _ @ ' - inside. */
export const ReviewerNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\p{L}\p{N}](?:[\p{L}\p{N} ._@'-]*[\p{L}\p{N}])?$/u, "must be letters and digits, with spaces and . _ @ ' - only inside");

/** A group a request can be routed to: lower-case, like a team's handle. */
export const GroupNameSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, 'must be 1-40 of a-z 0-9 . _ -, starting with a letter or digit');

export const ReviewerSchema = z.strictObject({
  name: ReviewerNameSchema,
  groups: z.array(GroupNameSchema).max(32),
  addedAt: z.number(),
});
export type Reviewer = z.infer<typeof ReviewerSchema>;

/** Two names for one person differ in case only: "Ana" and "ana" are one reviewer. */
export const sameReviewer = (a: string, b: string): boolean => a.localeCompare(b, undefined, { sensitivity: 'accent' }) === 0;
