// A team's routing policy (issue 39, part 4): which reviewers a request reaches and how many must approve it, decided
// by the team in the hub's `routing.json`, never by the agent. The first route whose conditions all hold is the
// request's; none: every reviewer, one approval (the single person's hub, as before).
import * as z from 'zod';
import { RequestKindSchema, type RequestKind } from './review-request.js';
import { formatIssues, fromZod, issue } from './field-issues.js';
import { GroupNameSchema, ReviewerNameSchema } from './reviewers.js';

/** The most approvals a route may ask for. */
export const MAX_QUORUM = 10;

const NameSchema = z.string().trim().min(1).max(100);
/** An absolute directory, without a trailing slash (`/` alone is every directory). */
const DirectorySchema = z.string().regex(/^\/(?:[^/\0]+(?:\/[^/\0]+)*)?$/, 'must be an absolute path without a trailing slash');

export const RouteSchema = z.strictObject({
  name: NameSchema,
  /** Every condition given must hold; a list holds when one of its entries does. */
  match: z.strictObject({
    /** The agent: the MCP client's name (`clientInfo.name`), or the host a bridged prompt came from; any case. */
    agents: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
    /** The project directory a request was made in (a bridged prompt's `cwd`) is one of these or inside one. */
    directories: z.array(DirectorySchema).min(1).max(50).optional(),
    kinds: z.array(RequestKindSchema).min(1).max(6).optional(),
    /** The tool a bridged prompt asks about (`Bash`, `Edit`…), exactly. */
    tools: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
  }),
  /** The groups whose reviewers see and decide it (`reviewer add <name> --group G`). */
  groups: z.array(GroupNameSchema).min(1).max(20),
  /** Distinct reviewers who must approve; the first rejection rejects. */
  quorum: z.number().int().min(1).max(MAX_QUORUM),
});
export type Route = z.infer<typeof RouteSchema>;

export const RoutingPolicySchema = z.strictObject({ version: z.literal(1), routes: z.array(RouteSchema).max(200) });
export type RoutingPolicy = z.infer<typeof RoutingPolicySchema>;
/** The policy as the hub read it: none (no file), the policy, or what is wrong with it, naming the field and the rule. */
export type RoutingRead = { ok: true; policy: RoutingPolicy | null } | { ok: false; problem: string };

/** What a request keeps of the route it took, fixed at creation: a later policy change does not move it. */
export const RequestRouteSchema = z.strictObject({ name: NameSchema, groups: z.array(GroupNameSchema).min(1).max(20), quorum: z.number().int().min(1).max(MAX_QUORUM) });
export type RequestRoute = z.infer<typeof RequestRouteSchema>;

/** One reviewer's approval toward a quorum: who, when, their call's key, and the hash of the values they approved. */
export const QuorumApprovalSchema = z.strictObject({
  by: ReviewerNameSchema,
  at: z.number(),
  idempotencyKey: z.string().min(1).max(200),
  decisionHash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type QuorumApproval = z.infer<typeof QuorumApprovalSchema>;

/** What `status` adds for a request that needs several approvals: how many so far, of how many, and whose. */
export const QuorumStatusSchema = z.strictObject({ given: z.number().int().min(0), needed: z.number().int().min(2).max(MAX_QUORUM), by: z.array(ReviewerNameSchema).max(MAX_QUORUM) });
export type QuorumStatus = z.infer<typeof QuorumStatusSchema>;

/** A policy file's parsed JSON (undefined: no file; null: not JSON) as the hub uses it, every problem named by field and rule. */
export function readRoutingPolicy(raw: unknown): RoutingRead {
  if (raw === undefined) return { ok: true, policy: null };
  if (raw === null) return { ok: false, problem: formatIssues([issue([], 'json', 'is not JSON')]) };
  const parsed = RoutingPolicySchema.safeParse(raw);
  if (parsed.success) return { ok: true, policy: parsed.data };
  return { ok: false, problem: formatIssues(fromZod(RoutingPolicySchema, parsed.error.issues, raw)) };
}

/** What a route is matched on, as the hub knows it (never what the agent says its reviewers should be). */
export interface RouteSubject {
  agent: string | null;
  directory: string | null;
  kind: RequestKind;
  tool: string | null;
}

/** `dir` is `root` or inside it, as text (`/srv/app` holds `/srv/app/web`, not `/srv/apple`). */
export function inDirectory(dir: string, root: string): boolean {
  return root === '/' || dir === root || dir.startsWith(`${root}/`);
}

export function routeOf(policy: RoutingPolicy | null, subject: RouteSubject): RequestRoute | null {
  if (policy === null) return null;
  const agent = subject.agent?.toLowerCase() ?? null;
  for (const route of policy.routes) {
    const { agents, directories, kinds, tools } = route.match;
    if (agents && (agent === null || !agents.some((a) => a.toLowerCase() === agent))) continue;
    if (directories && (subject.directory === null || !directories.some((d) => inDirectory(subject.directory ?? '', d)))) continue;
    if (kinds && !kinds.includes(subject.kind)) continue;
    if (tools && (subject.tool === null || !tools.includes(subject.tool))) continue;
    return { name: route.name, groups: [...route.groups], quorum: route.quorum };
  }
  return null;
}

/** Whether a reviewer in `groups` may see and decide a request that took `route` (no route: everyone). */
export function reviewerMayDecide(route: RequestRoute | undefined, groups: readonly string[] | null): boolean {
  if (route === undefined) return true;
  return groups !== null && groups.some((g) => route.groups.includes(g));
}
