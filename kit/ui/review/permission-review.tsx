import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import type { PermissionRequest } from '../../../shared/permission.js';
import type { RuleDraft } from '../../../shared/rules.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide, Decision } from '../../messages.js';
import type { RuleScope } from '../rule-words.js';
import { HiddenCharactersWarning, VisibleText } from '../visible-text.js';
import { ConfirmCancel, type CancelWording } from './confirm-cancel.js';
import { FeedbackView, GeneralIssues, useDecision } from './decision-feedback.js';
import { hostName, jsonText, PermissionSubject } from './permission-subject.js';
import { refusalFeedback } from './refused-attempt.js';
import { useReviewKeys } from './use-review-keys.js';
import './review.css';

const DENY: CancelWording = {
  question: 'Deny this?',
  text: 'Deny this? The agent is told you denied it, with your reason if you gave one.',
  confirm: 'Yes, deny',
  keep: 'Keep reviewing',
};

/** What the editor holds: the command itself for a shell tool, the whole input as JSON for any other tool. */
function editableText(request: PermissionRequest): string {
  return request.command ?? jsonText(request.input);
}

type Edited = { ok: true; input: Record<string, unknown> | undefined } | { ok: false; message: string };

/**
 * The input the edited text stands for: undefined when unchanged (allowed as the host sent it); for a command, the
 * host's input with that command; otherwise the JSON object typed.
 */
export function editedInput(request: PermissionRequest, text: string): Edited {
  if (request.command !== undefined) {
    if (text === request.command) return { ok: true, input: undefined };
    if (text.trim() === '') return { ok: false, message: 'The command cannot be empty.' };
    return { ok: true, input: { ...request.input, command: text } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `The input is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, message: 'The input must be a JSON object.' };
  const input = Object.fromEntries(Object.entries(parsed));
  return { ok: true, input: JSON.stringify(input) === JSON.stringify(request.input) ? undefined : input };
}

/**
 * A host's own permission prompt (Claude Code's, Codex's, any bridged host's), bridged by the hook: what it would run, shown as text, and
 * the person's answer. "Allow once" and "Deny" (with a reason the host shows the agent) decide this one; where the
 * host runs an edited input the command (or the input) can be changed first, and what is in the editor is what runs.
 * "Always allow…" / "Always deny…" decide it too and save a rule, shown in words and editable before it is saved.
 * Only a surface whose decisions can carry rules (the extension's) offers them, by handing in its rule editor
 * (`ruleEditor`, `permission-rule-editor.tsx`).
 */
/** What the review hands a rule editor: the prompt to draft from (as edited), its scope, and what saving does. */
export interface RuleSlotProps {
  source: PermissionRequest;
  scopeOf: PermissionRequest;
  effect: 'allow' | 'deny';
  scope: RuleScope;
  busy: boolean;
  onSave(rule: RuleDraft): void;
  onCancel(): void;
}
export type RuleSlot = (props: RuleSlotProps) => ComponentChildren;

export function PermissionReview({ row, request, decide, ruleEditor, onDone }: {
  row: RequestRow;
  request: PermissionRequest;
  decide: Decide;
  ruleEditor?: RuleSlot | undefined;
  onDone?: () => void;
}) {
  const [refused] = useState(() => refusalFeedback(row));
  const decision = useDecision(decide, onDone, refused);
  const frozen = decision.busy || decision.settled;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => editableText(request));
  const [reason, setReason] = useState('');
  const [issues, setIssues] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const [ruleFor, setRuleFor] = useState<'allow' | 'deny' | null>(null);
  const root = useRef<HTMLElement>(null);
  const editorId = useId();
  const warningId = useId();
  const allowHint = useId();
  const denyHint = useId();
  const edited = editing ? editedInput(request, text) : ({ ok: true, input: undefined } as const);
  const scope: RuleScope = request.sessionId ? 'session' : 'project';
  // A rule made after editing the command starts from the command that will run.
  const editedCommand = edited.ok ? edited.input?.command : undefined;
  const ruleSource = request.command !== undefined && typeof editedCommand === 'string' ? { ...request, command: editedCommand } : request;

  const send = async (d: Omit<Decision, 'elicitationId'>) => {
    if (frozen) return;
    setConfirming(false);
    const found = await decision.send({ elicitationId: row.elicitationId, ...d });
    setIssues(found.map((i) => i.message));
  };

  /** Allow, with the edited input when it was changed; an editor that does not parse sends nothing. */
  const allow = (rule?: RuleDraft) => {
    if (!edited.ok) {
      setIssues([edited.message]);
      return;
    }
    void send({ decision: 'approved', ...(edited.input ? { values: { updatedInput: edited.input } } : {}), ...(rule ? { rule } : {}) });
  };
  const cleanReason = reason.trim();
  const deny = (rule?: RuleDraft) => void send({ decision: 'rejected', ...(cleanReason ? { comment: cleanReason } : {}), ...(rule ? { rule } : {}) });

  // A permission is a yes or a no: Ctrl+Enter has no single answer to send; Esc asks before denying.
  useReviewKeys(root, { onSubmit: () => undefined, onEscape: () => setConfirming((open) => !open && !frozen) });

  const runsWhat = request.command !== undefined ? 'the command' : 'the tool';
  return (
    <section class="review permission-review" ref={root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      <PermissionSubject request={request} />

      {/* Keyed: without keys Preact may reuse the reason's <label> for the editor, and dropping its maxLength there
          sets the editor's to 0, so nothing could be typed (seen in Chromium). */}
      {request.editable && (
        editing ? (
          <label key="editor" class="comment">
            <span>{request.command !== undefined ? 'Command to run' : 'Input to run (JSON)'}</span>
            <textarea
              id={editorId}
              class="mono"
              rows={request.command !== undefined ? 3 : 8}
              value={text}
              disabled={frozen}
              aria-invalid={edited.ok ? undefined : 'true'}
              aria-describedby={warningId}
              onInput={(e) => setText(e.currentTarget.value)}
            />
            <HiddenCharactersWarning id={warningId} value={text} />
            {!edited.ok && <span class="error">{edited.message}</span>}
          </label>
        ) : (
          <p key="edit"><button type="button" disabled={frozen} onClick={() => setEditing(true)}>Edit before allowing</button></p>
        )
      )}
      {!request.editable && <p class="muted"><VisibleText text={hostName(request)} /> runs {runsWhat} only as it is here: allow or deny it.</p>}

      <label key="reason" class="comment">
        <span>Reason if you deny (optional, the agent is told)</span>
        <textarea aria-label="Reason if you deny (optional, the agent is told)" maxLength={4000} rows={2} value={reason} disabled={frozen} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>

      <GeneralIssues issues={issues} />
      <FeedbackView feedback={decision.feedback} />

      {ruleFor && ruleEditor ? (
        ruleEditor({ source: ruleSource, scopeOf: request, effect: ruleFor, scope, busy: frozen, onSave: (rule) => (rule.effect === 'allow' ? allow(rule) : deny(rule)), onCancel: () => setRuleFor(null) })
      ) : (
        <footer class="review-footer">
          <button type="button" class="primary" aria-describedby={allowHint} disabled={frozen || !edited.ok} onClick={() => allow()}>Allow once</button>
          <span id={allowHint} class="button-hint">{edited.ok && edited.input ? `runs ${runsWhat} as edited above, this time only` : `runs ${runsWhat} as shown, this time only`}</span>
          <button type="button" aria-describedby={denyHint} disabled={frozen} onClick={() => deny()}>Deny</button>
          <span id={denyHint} class="button-hint">the agent is told no{cleanReason ? ', with your reason' : ''}</span>
          {ruleEditor && (
            <>
              <button type="button" disabled={frozen || !edited.ok} onClick={() => setRuleFor('allow')}>Always allow…</button>
              <button type="button" disabled={frozen} onClick={() => setRuleFor('deny')}>Always deny…</button>
            </>
          )}
          <span class="muted hint">Esc denies</span>
        </footer>
      )}
      {confirming && <ConfirmCancel wording={DENY} busy={frozen} onConfirm={() => deny()} onClose={() => setConfirming(false)} />}
    </section>
  );
}
