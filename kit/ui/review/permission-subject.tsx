import type { PermissionRequest } from '../../../shared/permission.js';
import { VisibleText } from '../visible-text.js';

/** The host as the request names it; a request filed before hosts named themselves shows its id. */
export function hostName(request: Pick<PermissionRequest, 'host' | 'hostName'>): string {
  return request.hostName ?? request.host;
}

/** JSON as text for a <pre>; a value that cannot be printed still says it is there. */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return '(this value cannot be shown: it is nested too deeply)';
  }
}

function lineClass(line: string): string | undefined {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return undefined;
}

/**
 * A unified diff as text lines, each styled by its first character; the + and - stay in the text, so the colour is
 * never the only sign. Never HTML: every line is a text node (with hidden characters shown).
 */
export function DiffText({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      {lines.map((line, i) => <span key={i} class={lineClass(line)}><VisibleText text={line} />{'\n'}</span>)}
    </pre>
  );
}

/**
 * What a host asks permission for, the same in the review, the decided detail and the history: the tool, what it would
 * run (a command, an edit's diff, another MCP server's tool and its arguments), where, and in which session.
 */
export function PermissionSubject({ request }: { request: PermissionRequest }) {
  const toolInput = jsonText(request.input);
  return (
    <>
      <dl aria-label="Permission" class="permission-facts">
        <dt>Agent</dt><dd><VisibleText text={hostName(request)} /></dd>
        <dt>Tool</dt><dd><code><VisibleText text={request.tool} /></code></dd>
        {request.mcp && <><dt>MCP server</dt><dd><VisibleText text={request.mcp.server} /> · tool <code><VisibleText text={request.mcp.tool} /></code></dd></>}
        {request.path !== undefined && <><dt>File</dt><dd><code><VisibleText text={request.path} /></code></dd></>}
        <dt>Directory</dt><dd><code><VisibleText text={request.cwd || '(not given)'} /></code></dd>
        <dt>Session</dt><dd><VisibleText text={request.sessionId || '(not given)'} /></dd>
      </dl>
      {request.command !== undefined && (
        <>
          <h3>Command</h3>
          <pre class="command" aria-label="Command" tabIndex={0}><VisibleText text={request.command} /></pre>
        </>
      )}
      {request.diff !== undefined && (
        <>
          <h3>Changes</h3>
          <DiffText diff={request.diff} label="Changes" />
        </>
      )}
      {request.mcp && (
        <>
          <h3>Arguments</h3>
          <pre class="context-json" aria-label="Arguments" tabIndex={0}><VisibleText text={toolInput} /></pre>
        </>
      )}
      {!request.mcp && (
        <details>
          <summary>The tool's whole input</summary>
          <pre class="context-json" aria-label="Tool input" tabIndex={0}><VisibleText text={toolInput} /></pre>
        </details>
      )}
    </>
  );
}
