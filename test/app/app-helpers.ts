// A fake host connection for the view: scripted answers to the app-only tools, every call recorded.
import type { DecidedVia } from '../../shared/lifecycle.js';
import { vi } from 'vitest';
import type { CallToolResult } from '../../app/app-client.js';
import type { AppHost } from '../../app/review-app.js';
import { checkProposalInput } from '../../shared/approval-input.js';
import type { RequestView } from '../../shared/review-request.js';
import { northmarkProposal } from '../fixtures/northmark.js';

export const ID = 'el_northmark';
export const TOKEN = 'A'.repeat(43);

export function northmarkView(extra: Partial<RequestView> = {}): RequestView {
  const checked = checkProposalInput(structuredClone(northmarkProposal));
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  const now = Date.now();
  return {
    elicitationId: ID, kind: 'proposal', status: 'pending', message: checked.request.message, createdAt: now - 60_000, expiresAt: now + 3_600_000,
    requester: { client: 'Claude Code', pid: 42 }, request: checked.request, renderedTemplate: null, ...extra,
  };
}

export function structured(structuredContent: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, ...(isError ? { isError: true } : {}) };
}

export function withKey(id = ID, token = TOKEN): CallToolResult {
  return { content: [{ type: 'text', text: 'Waiting for a decision.' }], structuredContent: { elicitationId: id, status: 'pending' }, _meta: { 'io.github.elicitly/app': { elicitationId: id, token } } };
}

type Answer = CallToolResult | Error | ((args: Record<string, unknown>) => CallToolResult);

/** A host whose tools/call answers come from `view` (elicit_app_view) and the scripted `decides`, in order. */
export function fakeHost(state: { view: RequestView; decided?: { via: DecidedVia; at: number } | null }, ...decides: Answer[]) {
  const calls: { name: string; arguments: Record<string, unknown> }[] = [];
  const host: AppHost = {
    callServerTool: vi.fn(async (params: { name: string; arguments?: Record<string, unknown> }) => {
      const args = params.arguments ?? {};
      calls.push({ name: params.name, arguments: args });
      if (params.name === 'elicit_app_view') return structured({ view: state.view, decided: state.decided ?? null });
      const next = decides.shift() ?? structured({ ok: true, status: args.decision });
      if (next instanceof Error) throw next;
      return typeof next === 'function' ? next(args) : next;
    }) as unknown as AppHost['callServerTool'],
    requestDisplayMode: vi.fn(async ({ mode }: { mode: 'inline' | 'fullscreen' | 'pip' }) => ({ mode })) as unknown as AppHost['requestDisplayMode'],
  };
  return { host, calls, decidesOf: () => calls.filter((c) => c.name === 'elicit_app_decide').map((c) => c.arguments) };
}
