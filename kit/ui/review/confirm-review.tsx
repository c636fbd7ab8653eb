import type { ConfirmAsk } from '../../../shared/ask-input.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide } from '../../messages.js';
import { AnswerButton, AskFooter } from './ask-footer.js';
import { useReview } from './use-review.js';
import { VisibleText } from '../visible-text.js';
import './review.css';

/**
 * A yes/no question (elicit_confirm) with the agent's own words for yes and no. Neither button is the default: Enter
 * acts only on the focused button, and Ctrl+Enter has no single answer to send.
 */
export function ConfirmReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: ConfirmAsk;
  decide: Decide;
  onDone?: () => void;
}) {
  const review = useReview(row, [], decide, onDone, null);
  return (
    <section class="review ask-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      <AskFooter review={review} keys="Esc dismisses">
        <AnswerButton label={<VisibleText text={request.labels.yes} />} hint="answers yes" disabled={review.frozen} onClick={() => review.answer({ values: { confirmed: true } })} />
        <AnswerButton label={<VisibleText text={request.labels.no} />} hint="answers no" disabled={review.frozen} onClick={() => review.answer({ values: { confirmed: false } })} />
      </AskFooter>
    </section>
  );
}
