// A host's own permission prompt (Claude Code's, Codex's, any host the hook bridges), bridged into the inbox by
// `elicitly-companion hook`: the request as it is stored and shown, the check of a person's answer, and what the hook
// reads back to print the host's decision. The hosts themselves are data on the server (server/hook/hosts/): the
// request names its host and carries what a reviewer shows of it, so no surface keeps a table of hosts.
import * as z from 'zod';
import { ReceiptSchema } from './receipt.js';
import { isObject, issue, unknownKey, wrongType, type FieldIssue } from './field-issues.js';
import { DecidedViaSchema, type Outcome } from './lifecycle.js';
import { ReviewerNameSchema } from './reviewers.js';

/** A host the hook bridges, by its id (`claude-code`, `codex`): what `hook --host` names and rules match as the agent. */
export const HostIdSchema = z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a host id: lower-case letters, digits and dashes');
export type HostId = z.infer<typeof HostIdSchema>;

/** The host's hook event that asks (`PreToolUse`, `PermissionRequest`, `BeforeTool`): its own name for it. */
export const PermissionEventSchema = z.string().regex(/^[A-Za-z][A-Za-z0-9._-]{0,59}$/, 'an event name');

export const PERMISSION_LIMITS = { tool: 200, command: 64 * 1024, diff: 256 * 1024, path: 4096, session: 200, suggestions: 20 } as const;

export const PermissionRequestSchema = z.strictObject({
  kind: z.literal('permission'),
  /** One line a person reads first: "Claude Code wants to run a command". */
  message: z.string(),
  host: HostIdSchema,
  /**
   * The host as a person knows it ("Claude Code"): what every surface shows. Absent only on requests filed before
   * protocol 13, which show the id.
   */
  hostName: z.string().min(1).max(60).optional(),
  event: PermissionEventSchema,
  /** The tool as the host names it: `Bash`, `Edit`, `exec_command`, `mcp__github__create_issue`. */
  tool: z.string().min(1).max(PERMISSION_LIMITS.tool),
  /** The tool's input exactly as the host sent it: what runs if the person allows it unchanged. */
  input: z.record(z.string(), z.unknown()),
  /** A shell command, as it would run. */
  command: z.string().max(PERMISSION_LIMITS.command).optional(),
  /** An edit or a new file as a unified diff, and the file it touches. */
  diff: z.string().max(PERMISSION_LIMITS.diff).optional(),
  path: z.string().max(PERMISSION_LIMITS.path).optional(),
  /** Another MCP server's tool: its server and tool names (the arguments are `input`). */
  mcp: z.strictObject({ server: z.string().min(1).max(PERMISSION_LIMITS.tool), tool: z.string().min(1).max(PERMISSION_LIMITS.tool) }).optional(),
  cwd: z.string().max(PERMISSION_LIMITS.path),
  sessionId: z.string().max(PERMISSION_LIMITS.session),
  /** Whether the host runs an edited input for this event (Codex's PermissionRequest does not). */
  editable: z.boolean(),
  /** The host's own "always allow" suggestions (Claude Code's `permission_suggestions`), returned verbatim when chosen. */
  suggestions: z.array(z.record(z.string(), z.unknown())).max(PERMISSION_LIMITS.suggestions),
  timeoutSeconds: z.number(),
});
export type PermissionRequest = z.infer<typeof PermissionRequestSchema>;

/**
 * A person's "allow" of a permission request, checked against it. The only value is `updatedInput`, the edited input,
 * and only where the host runs one; a shell tool's edited input keeps a non-empty `command` string.
 */
export function checkPermissionValues(request: PermissionRequest, values: unknown): { ok: true; values: Record<string, unknown> } | { ok: false; issues: FieldIssue[] } {
  if (values === undefined) return { ok: true, values: {} };
  if (!isObject(values)) return { ok: false, issues: [issue(['values'], 'not_object', wrongType('an object', values))] };
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(values)) {
    if (key !== 'updatedInput') issues.push(issue(['values', key], 'unknown_field', unknownKey(['updatedInput'], 'a permission request takes only an edited input')));
  }
  const updated = values.updatedInput;
  if (updated === undefined) return issues.length ? { ok: false, issues } : { ok: true, values: {} };
  if (!request.editable) issues.push(issue(['values', 'updatedInput'], 'not_editable', `${request.hostName ?? request.host} does not run an edited input for ${request.event}; allow or deny it as it is`));
  else if (!isObject(updated)) issues.push(issue(['values', 'updatedInput'], 'not_object', wrongType('an object', updated)));
  else if (request.command !== undefined && (typeof updated.command !== 'string' || updated.command.trim() === '')) {
    issues.push(issue(['values', 'updatedInput', 'command'], 'required', wrongType('the command to run', updated.command)));
  }
  return issues.length ? { ok: false, issues } : { ok: true, values: { updatedInput: updated } };
}

/** What the hook reads back: allow (maybe with an edited input) or deny with the person's reason, and who decided. */
export const PermissionResultSchema = z.strictObject({
  behavior: z.enum(['allow', 'deny']),
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  /** The person's reason for a deny (their comment), or the rule that decided. */
  message: z.string().optional(),
  decidedVia: DecidedViaSchema,
  /** The reviewer who decided, on a team's hub. */
  decidedBy: ReviewerNameSchema.optional(),
  /** With a quorum: every reviewer who approved, in order. */
  approvedBy: z.array(ReviewerNameSchema).optional(),
  /** The rule that decided, or that the person saved with this decision. */
  ruleId: z.string().optional(),
  /** Where the decision is in the hub's ledger (`shared/receipt.ts`). */
  receipt: ReceiptSchema.optional(),
});
export type PermissionResult = z.infer<typeof PermissionResultSchema>;

export function permissionResult(outcome: Outcome): PermissionResult {
  const allowed = outcome.decision === 'approved';
  const result: PermissionResult = { behavior: allowed ? 'allow' : 'deny', decidedVia: outcome.decidedVia ?? 'extension' };
  const updated = outcome.values?.updatedInput;
  if (allowed && isObject(updated)) result.updatedInput = updated;
  if (outcome.comment !== undefined && outcome.comment !== '') result.message = outcome.comment;
  if (outcome.ruleId !== undefined) result.ruleId = outcome.ruleId;
  if (outcome.decidedBy !== undefined) result.decidedBy = outcome.decidedBy;
  if (outcome.approvedBy !== undefined) result.approvedBy = outcome.approvedBy;
  return result;
}
