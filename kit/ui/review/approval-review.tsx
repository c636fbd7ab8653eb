import { useMemo, useState } from 'preact/hooks';
import { checkDecisionValues, type ApprovalRequest } from '../../../shared/approval-input.js';
import { fieldMessages } from './decision-feedback.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide } from '../../messages.js';
import { FormFields, initialValues } from './form-fields.js';
import { ReviewFooter } from './review-footer.js';
import { SafeHtml } from './safe-html.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { VisibleText } from '../visible-text.js';
import { ContextRows } from './context-rows.js';
import './review.css';

const JSON_HINTS = { ok: 'approves', cancel: 'rejects' };
const FORM_HINTS = { ok: 'approves: sends the form', cancel: 'rejects: sends nothing' };

/** Context as text: JSON.stringify output rendered as a string child is never parsed as markup. */
function contextText(context: unknown): string {
  try {
    return JSON.stringify(context, null, 2) ?? String(context);
  } catch {
    return String(context);
  }
}

export function ApprovalReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: ApprovalRequest;
  decide: Decide;
  onDone?: () => void;
}) {
  const schema = request.mode === 'json' ? null : request.requestedSchema;
  const keys = useMemo(() => (schema ? Object.keys(schema.properties) : []), [schema]);
  const [values, setValues] = useState<ReadonlyMap<string, unknown>>(() => initialValues(schema, refusedAttempt(row)?.values));
  const review = useReview(row, keys, decide, onDone, () => {
    // A json-mode approval carries no values; a form's are checked (and normalized) before they leave.
    if (!schema) return { ok: true, payload: {} };
    // fromEntries defines own keys, so every name the agent chose stays a plain value.
    const checked = checkDecisionValues(request, Object.fromEntries(values));
    return checked.ok ? { ok: true, payload: { values: checked.values } } : checked;
  });
  const { issues } = review;

  const edit = (key: string, v: unknown) => {
    setValues((prev) => new Map(prev).set(key, v));
    if (schema) review.showFieldMessages(new Map([[key, fieldMessages(schema, key, v)]]));
  };

  const showContext = request.mode !== 'form';

  return (
    <section class="review approval-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      {row.renderedTemplate !== null ? (
        <SafeHtml html={row.renderedTemplate} />
      ) : (
        showContext && <ContextRows context={request.context} json={contextText(request.context)} />
      )}

      {schema && <FormFields schema={schema} values={values} issues={issues} onEdit={edit} />}

      <ReviewFooter {...review.footer} labels={request.labels} hints={schema ? FORM_HINTS : JSON_HINTS} />
    </section>
  );
}
