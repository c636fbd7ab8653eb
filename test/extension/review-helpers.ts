// Rows and a scripted background client for the review components' tests.
import { vi } from 'vitest';
import { checkApprovalInput, checkProposalInput, type ApprovalRequest, type ProposalRequest } from '../../shared/approval-input.js';
import { checkSelectionInput, type ConfirmAsk, type FormAsk, type SelectionAsk } from '../../shared/ask-input.js';
import type { PermissionRequest } from '../../shared/permission.js';
import { RequestedSchemaSchema } from '../../shared/requested-schema.js';
import type { ReviewRequest } from '../../shared/review-request.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import type { RequestRow, StoredRow } from '../../kit/rows/rows.js';
import type { Verdict } from '../../kit/rows/verdict.js';
import type { ReviewerClient, DecideReply, Decision } from '../../kit/messages.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { bashPermission as bashFixture } from '../fixtures/permission.js';

export type Decided = Decision;

export function clone<T>(v: T): T {
  return structuredClone(v);
}

export function northmark(): typeof northmarkProposal {
  return clone(northmarkProposal);
}

export function proposal(input: unknown = northmark()): ProposalRequest {
  const checked = checkProposalInput(input);
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.request;
}

export function approval(input: unknown): ApprovalRequest {
  const checked = checkApprovalInput(input);
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.request;
}

/** A yes/no question as elicit_confirm stores it for the extension. */
export function confirmAsk(message: string, yes = 'Yes', no = 'No'): ConfirmAsk {
  return { kind: 'confirm', message, labels: { yes, no }, timeoutSeconds: 3600 };
}

/** A form ask as elicit_form stores it for the extension; the schema is checked as the server checks it. */
export function formAsk(message: string, requestedSchema: unknown): FormAsk {
  return { kind: 'form', message, requestedSchema: RequestedSchemaSchema.parse(requestedSchema), timeoutSeconds: 3600 };
}

/** elicit_selection's input, checked and normalized by the server's own check. */
export function selectionAsk(input: Record<string, unknown>): SelectionAsk {
  const checked = checkSelectionInput(input);
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.value.ask;
}

/** A Claude Code Bash prompt as the hook files it, in the project the review tests show. */
export function bashPermission(overrides: Partial<PermissionRequest> = {}): PermissionRequest {
  const command = 'npm test -- --watch=false';
  return bashFixture(command, { input: { command, description: 'Run the tests' }, cwd: '/home/dev/project', sessionId: 'sess-42', ...overrides });
}

/** A row as a review gets it; with a verdict, a row as the database gives it back (what the history shows). */
export function rowFor(request: ReviewRequest, extra: Partial<RequestRow> & { verdict: Verdict }): StoredRow;
export function rowFor(request: ReviewRequest, extra?: Partial<RequestRow>): RequestRow;
export function rowFor(request: ReviewRequest, extra: Partial<RequestRow> = {}): RequestRow {
  return {
    elicitationId: 'el-1',
    kind: request.kind,
    status: 'pending',
    message: request.message,
    words: [],
    agent: 'Claude Code',
    requester: { client: 'Claude Code', pid: 42 },
    createdAt: Date.UTC(2025, 0, 2, 3, 4, 5),
    expiresAt: Date.UTC(2025, 0, 2, 4, 4, 5),
    request,
    renderedTemplate: null,
    ...extra,
  };
}

/** Records every decide call and answers with the scripted replies in order (then "answered ok"). */
export function fakeClient(...replies: (DecideReply | Promise<DecideReply>)[]) {
  const calls: Decided[] = [];
  const client: ReviewerClient = {
    decide: vi.fn(async (req: Decided): Promise<DecideReply> => {
      calls.push(req);
      return (await replies.shift()) ?? { state: 'answered', ok: true, status: req.decision };
    }),
    reconnect: vi.fn(() => Promise.resolve()),
  };
  return { client, calls };
}

export function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** The texts an element's aria-describedby points at, in order: what a screen reader reads after its name. */
export function descriptions(el: Element): string[] {
  return (el.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean).map((id) => document.getElementById(id)?.textContent ?? `(missing #${id})`);
}

/** A permission prompt stored as the history keeps it: `answer` the person's, or a rule's (`byRule`), or none. */
export function permissionRow(id: string, command: string, answer: 'allow' | 'deny' | 'open', options: { at?: number; byRule?: boolean; request?: Partial<PermissionRequest> } = {}): RequestRow {
  const request = bashPermission({ command, input: { command }, message: `Claude Code wants to run ${command}`, ...options.request });
  const decided: Partial<RequestRow> = answer === 'open'
    ? { status: 'canceled' }
    : { status: answer === 'allow' ? 'approved' : 'rejected', decidedAt: (options.at ?? Date.now()) + 1000, outcome: { decision: answer === 'allow' ? 'approved' : 'rejected' }, ...(options.byRule ? { decidedVia: 'rule', ruleId: 'rule_00000000000000a1' } : { delivery: 'delivered' }) };
  return rowFor(request, { elicitationId: id, createdAt: options.at ?? Date.now(), ...decided });
}

export async function seed(db: ElicitlyDb, rows: RequestRow[]): Promise<void> {
  await db.requests.bulkPut(rows);
}
