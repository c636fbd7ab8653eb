import { useMemo, useState } from 'preact/hooks';
import type { FormAsk } from '../../../shared/ask-input.js';
import { validateValues } from '../../../shared/requested-schema.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide } from '../../messages.js';
import { AnswerButton, AskFooter } from './ask-footer.js';
import { fieldMessages } from './decision-feedback.js';
import { FormFields, initialValues } from './form-fields.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { VisibleText } from '../visible-text.js';
import './review.css';

/** A form ask (elicit_form): the same editors and live checks as a form-mode approval, answered with Submit. */
export function FormAskReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: FormAsk;
  decide: Decide;
  onDone?: () => void;
}) {
  const schema = request.requestedSchema;
  const keys = useMemo(() => Object.keys(schema.properties), [schema]);
  const [values, setValues] = useState<ReadonlyMap<string, unknown>>(() => initialValues(schema, refusedAttempt(row)?.values));
  const review = useReview(row, keys, decide, onDone, () => {
    // The hub's own check of a form ask (checkAskValues) is this validator; fromEntries keeps every name an own key.
    const checked = validateValues(schema, Object.fromEntries(values), { prefix: 'values' });
    return checked.ok ? { ok: true, payload: { values: checked.values } } : checked;
  });

  const edit = (key: string, v: unknown) => {
    setValues((prev) => new Map(prev).set(key, v));
    review.showFieldMessages(new Map([[key, fieldMessages(schema, key, v)]]));
  };

  return (
    <section class="review ask-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      <FormFields schema={schema} values={values} issues={review.issues} onEdit={edit} />
      <AskFooter review={review} keys="Ctrl+Enter submits · Esc dismisses">
        <AnswerButton label="Submit" hint="sends the form" primary disabled={review.frozen} onClick={review.footer.onOk} />
      </AskFooter>
    </section>
  );
}
