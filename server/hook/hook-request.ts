// A host's hook input as the request a person reviews: a `permission` request (the command, the edit as a diff, the
// other MCP server's tool) or, for Claude Code's `Elicitation`, the other server's form as a `form` ask. Pure: the file
// an edit touches is read through `readFile`, so the diff shows the real lines around the change.
import { requestSizeIssues } from '../../shared/approval-input.js';
import type { FormAsk } from '../../shared/ask-input.js';
import { formatIssues, tooLong } from '../../shared/field-issues.js';
import { PERMISSION_LIMITS, type PermissionRequest } from '../../shared/permission.js';
import { checkRequestedSchema } from '../../shared/requested-schema.js';
import type { ElicitationPrompt, HookEvent, HookHost, ToolPrompt } from './hosts/hook-host.js';
import { unifiedDiff } from './unified-diff.js';

/** A file's text, or null when it does not exist or cannot be read (the diff then shows the edit's own lines). */
export type FileReader = (path: string) => string | null;

export type Mapped<T> = { ok: true; request: T } | { ok: false; why: string };

/** `mcp__github__create_issue` → github, create_issue (a server name never holds `__`; a tool name may). */
export function mcpTool(tool: string): { server: string; tool: string } | null {
  const match = /^mcp__(.+?)__(.+)$/.exec(tool);
  return match ? { server: match[1]!, tool: match[2]! } : null;
}

function commandOf(shellTools: ReadonlySet<string>, tool: string, input: Record<string, unknown>): string | undefined {
  if (!shellTools.has(tool)) return undefined;
  const command = input.command ?? input.cmd;
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((part) => typeof part === 'string')) return command.join(' ');
  return undefined;
}

/** `text` with `from` replaced by `to` once, or everywhere; literal, never a pattern. */
function replaced(text: string, from: string, to: string, all: boolean): string | null {
  if (from === '' || !text.includes(from)) return null;
  return all ? text.split(from).join(to) : text.replace(from, () => to);
}

type Edit = { old_string: string; new_string: string; replace_all?: boolean };

function editsOf(tool: string, input: Record<string, unknown>): Edit[] | null {
  const one = (e: unknown): Edit | null => {
    if (typeof e !== 'object' || e === null) return null;
    const { old_string: from, new_string: to, replace_all: all } = e as Record<string, unknown>;
    return typeof from === 'string' && typeof to === 'string' ? { old_string: from, new_string: to, replace_all: all === true } : null;
  };
  if (tool === 'Edit') {
    const edit = one(input);
    return edit ? [edit] : null;
  }
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
    const edits = input.edits.map(one);
    return edits.every((e): e is Edit => e !== null) ? edits : null;
  }
  return null;
}

/** The edit as a diff of the whole file when the file holds what the edit replaces; of the edit's own lines otherwise. */
function editDiff(path: string, edits: Edit[], readFile: FileReader): string {
  const current = readFile(path);
  if (current !== null) {
    let after: string | null = current;
    for (const edit of edits) after = after === null ? null : replaced(after, edit.old_string, edit.new_string, edit.replace_all === true);
    if (after !== null) return unifiedDiff(path, current, after);
  }
  return edits.map((edit) => unifiedDiff(path, edit.old_string, edit.new_string)).join('');
}

/** Codex's apply_patch: the patch itself is the readable diff; its first file is the path. */
function patchPath(patch: string): string | undefined {
  return /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(patch)?.[1]?.trim();
}

interface What {
  verb: string;
  command?: string;
  diff?: string;
  path?: string;
  mcp?: { server: string; tool: string };
}

function describeTool(host: HookHost, tool: string, input: Record<string, unknown>, readFile: FileReader): What {
  const command = commandOf(host.shellTools, tool, input);
  if (command !== undefined) return { verb: 'run a command', command };
  const path = typeof input.file_path === 'string' ? input.file_path : undefined;
  const edits = editsOf(tool, input);
  if (path !== undefined && edits) return { verb: 'edit a file', path, diff: editDiff(path, edits, readFile) };
  if (tool === 'Write' && path !== undefined && typeof input.content === 'string') {
    return { verb: 'write a file', path, diff: unifiedDiff(path, readFile(path), input.content) };
  }
  if (tool === 'apply_patch' && typeof input.command === 'string') {
    const patched = patchPath(input.command);
    return { verb: 'edit a file', diff: input.command, ...(patched !== undefined ? { path: patched } : {}) };
  }
  const mcp = mcpTool(tool);
  if (mcp) return { verb: `use ${mcp.server}'s ${mcp.tool}`, mcp };
  return { verb: `use ${tool}` };
}

/** The permission request for a host's tool event; too large to review → the host's own prompt. */
export function permissionRequest(host: HookHost, event: HookEvent, prompt: ToolPrompt, waitSeconds: number, readFile: FileReader): Mapped<PermissionRequest> {
  const { tool } = prompt;
  const long = (name: string, text: string | undefined, max: number): string | null => (text !== undefined && text.length > max ? `${name}: ${tooLong(max, text.length, 'character')}` : null);
  // The name first: describing the tool may read the file it edits.
  const longName = long('tool_name', tool, PERMISSION_LIMITS.tool);
  if (longName) return { ok: false, why: longName };
  const what = describeTool(host, tool, prompt.input, readFile);
  const longText =
    long('tool_input.command', what.command, PERMISSION_LIMITS.command) ??
    long('the diff', what.diff, PERMISSION_LIMITS.diff) ??
    long('tool_input.file_path', what.path, PERMISSION_LIMITS.path) ??
    long('cwd', prompt.cwd, PERMISSION_LIMITS.path) ??
    long('session_id', prompt.sessionId, PERMISSION_LIMITS.session);
  if (longText) return { ok: false, why: longText };
  const request: PermissionRequest = {
    kind: 'permission',
    message: `${host.name} wants to ${what.verb}`,
    host: host.id,
    hostName: host.name,
    event,
    tool,
    input: prompt.input,
    ...(what.command !== undefined ? { command: what.command } : {}),
    ...(what.diff !== undefined ? { diff: what.diff } : {}),
    ...(what.path !== undefined ? { path: what.path } : {}),
    ...(what.mcp ? { mcp: what.mcp } : {}),
    cwd: prompt.cwd,
    sessionId: prompt.sessionId,
    editable: host.editable(event),
    suggestions: (prompt.suggestions ?? []).slice(0, PERMISSION_LIMITS.suggestions),
    timeoutSeconds: waitSeconds,
  };
  const tooLarge = requestSizeIssues(request);
  if (tooLarge.length > 0) return { ok: false, why: formatIssues(tooLarge) };
  return { ok: true, request };
}

/** Another MCP server's form, asked in the extension; a URL request or a schema outside the MCP subset stays with the host. */
export function elicitationAsk(host: HookHost, prompt: ElicitationPrompt, waitSeconds: number): Mapped<FormAsk> {
  if (prompt.mode !== undefined && prompt.mode !== 'form') return { ok: false, why: `mode: "${prompt.mode}" elicitations stay with the host (only forms are bridged)` };
  const checked = checkRequestedSchema(prompt.requestedSchema, 'requested_schema');
  if (!checked.ok) return { ok: false, why: formatIssues(checked.issues) };
  const request: FormAsk = {
    kind: 'form',
    message: `The MCP server "${prompt.server}" (in ${host.name}) asks: ${prompt.message}`,
    requestedSchema: checked.schema,
    timeoutSeconds: waitSeconds,
  };
  const tooLarge = requestSizeIssues(request);
  return tooLarge.length > 0 ? { ok: false, why: formatIssues(tooLarge) } : { ok: true, request };
}
