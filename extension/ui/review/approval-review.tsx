import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { checkDecisionValues, type ApprovalRequest } from '../../../shared/approval-input.js';
import { propertyKind, type FieldIssue, type RequestedSchema } from '../../../shared/requested-schema.js';
import type { RequestRow } from '../../db/rows.js';
import type { BackgroundClient } from '../../messages.js';
import { splitIssues, useDecision, type SplitIssues } from './decision-feedback.js';
import { FieldEditor } from './field-editor.js';
import { ReviewFooter } from './review-footer.js';
import { SafeHtml } from './safe-html.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReviewKeys } from './use-review-keys.js';
import './review.css';

const NO_ISSUES: SplitIssues = { byKey: {}, general: [] };

function initialValues(schema: RequestedSchema | null): Record<string, unknown> {
  if (!schema) return {};
  return Object.fromEntries(
    Object.entries(schema.properties).map(([key, p]) => {
      // An unticked box reads as "no" to a reviewer, so it must not be submitted as "left empty".
      const fallback = propertyKind(p) === 'boolean' ? false : null;
      return [key, p.default ?? fallback];
    }),
  );
}

/** Context as text: JSON.stringify output rendered as a string child is never parsed as markup. */
function contextText(context: unknown): string {
  try {
    return JSON.stringify(context, null, 2) ?? String(context);
  } catch {
    return String(context);
  }
}

export function ApprovalReview({ row, request, client, onDone }: {
  row: RequestRow;
  request: ApprovalRequest;
  client: BackgroundClient;
  onDone?: () => void;
}) {
  const schema = request.mode === 'json' ? null : request.requestedSchema;
  const keys = useMemo(() => (schema ? Object.keys(schema.properties) : []), [schema]);
  const [attempt] = useState(() => refusedAttempt(row));
  const [values, setValues] = useState<Record<string, unknown>>(() => ({ ...initialValues(schema), ...attempt?.values }));
  const [comment, setComment] = useState(attempt?.comment ?? '');
  const [issues, setIssues] = useState<SplitIssues>(() => (attempt ? splitIssues(attempt.issues, keys) : NO_ISSUES));
  const [confirming, setConfirming] = useState(false);
  const [focusInvalid, setFocusInvalid] = useState(0);
  const decision = useDecision(client, onDone);
  const root = useRef<HTMLElement>(null);
  const id = useId();
  const frozen = decision.busy || decision.settled;

  useEffect(() => {
    if (focusInvalid === 0) return;
    root.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [focusInvalid]);

  const showIssues = (found: readonly FieldIssue[]) => {
    setIssues(splitIssues(found, keys));
    if (found.length) setFocusInvalid((n) => n + 1);
  };

  const edit = (key: string, v: unknown) => {
    setValues((prev) => ({ ...prev, [key]: v }));
    if (issues.byKey[key]) {
      const { [key]: _gone, ...rest } = issues.byKey;
      setIssues({ ...issues, byKey: rest });
    }
  };

  const cleanComment = comment.trim();
  const withComment = cleanComment ? { comment: cleanComment } : {};

  const approve = async () => {
    if (frozen) return;
    setConfirming(false);
    let sent: Record<string, unknown> | undefined;
    if (schema) {
      const checked = checkDecisionValues(request, values);
      if (!checked.ok) {
        decision.clearFeedback();
        showIssues(checked.issues);
        return;
      }
      sent = checked.values;
    }
    setIssues(NO_ISSUES);
    const found = await decision.send({
      elicitationId: row.elicitationId, decision: 'approved', ...(sent ? { values: sent } : {}), ...withComment,
    });
    showIssues(found);
  };

  const decline = async () => {
    if (frozen) return;
    setConfirming(false);
    await decision.send({ elicitationId: row.elicitationId, decision: 'rejected', ...withComment });
  };

  useReviewKeys(root, {
    onSubmit: () => void approve(),
    onEscape: () => setConfirming((open) => !open && !frozen),
  });

  const showContext = request.mode !== 'form';
  const required = schema?.required ?? [];

  return (
    <section class="review approval-review" ref={root}>
      <h2 class="review-message">{row.message}</h2>
      {row.renderedTemplate !== null ? (
        <SafeHtml html={row.renderedTemplate} />
      ) : (
        showContext && <pre class="context-json" aria-label="Context">{contextText(request.context)}</pre>
      )}

      {schema && (
        <div class="approval-form">
          {Object.entries(schema.properties).map(([key, p], i) => {
            const title = p.title ?? key;
            const inputId = `${id}-field-${i}`;
            const errors = issues.byKey[key];
            const errorId = `${id}-error-${i}`;
            const descId = `${id}-desc-${i}`;
            const describedBy = [p.description ? descId : '', errors ? errorId : ''].filter(Boolean).join(' ');
            const isRequired = required.includes(key);
            return (
              <div class="field" key={key}>
                <label for={inputId}>
                  {title}
                  {isRequired && <span class="required" aria-hidden="true">*</span>}
                </label>
                {p.description && <div id={descId} class="description muted">{p.description}</div>}
                <FieldEditor
                  id={inputId}
                  schema={p}
                  value={values[key]}
                  label={title}
                  required={isRequired}
                  invalid={errors !== undefined}
                  describedBy={describedBy || undefined}
                  onChange={(v) => edit(key, v)}
                />
                {errors && <div id={errorId} class="field-error">{errors.join(' ')}</div>}
              </div>
            );
          })}
        </div>
      )}

      <ReviewFooter
        generalIssues={issues.general}
        comment={comment}
        onComment={setComment}
        feedback={decision.feedback}
        labels={request.labels}
        frozen={frozen}
        onOk={() => void approve()}
        onCancel={() => void decline()}
        confirming={confirming}
        onCloseConfirm={() => setConfirming(false)}
      />
    </section>
  );
}
