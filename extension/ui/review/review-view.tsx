import { useMemo } from 'preact/hooks';
import { parseReviewRequest } from '../../../shared/review-request.js';
import type { RequestRow } from '../../db/rows.js';
import type { BackgroundClient } from '../../messages.js';
import { ApprovalReview } from './approval-review.js';
import { ProposalReview } from './proposal-review.js';
import { RequestDetail, STATUS_TEXT } from './request-detail.js';

export function ReviewView({ row, client, onDone }: { row: RequestRow; client: BackgroundClient; onDone?: () => void }) {
  const checked = useMemo(() => parseReviewRequest(row.request), [row.request]);
  if (row.status !== 'pending' || row.delivery === 'queued') {
    // A queued decision explains itself in the detail ("Waiting for the hub…"); only a settled status needs the note.
    return (
      <>
        {row.status !== 'pending' && <p class="muted note">This request is no longer pending: {STATUS_TEXT[row.status].toLowerCase()}.</p>}
        <RequestDetail row={row} />
      </>
    );
  }
  if (!checked.ok) {
    // The request is re-checked before anything of it is shown; a row that fails is reported, not rendered.
    return (
      <section class="review">
        <h2 class="review-message">{row.message}</h2>
        <div role="alert" class="error">
          <p>This request cannot be shown: it does not pass the checks the hub applies.</p>
          <ul class="issues">{checked.issues.map((i, n) => <li key={n}>{i.message}</li>)}</ul>
        </div>
      </section>
    );
  }
  // Keyed by id so opening another request never carries this one's edits over.
  const { request } = checked;
  return request.kind === 'proposal'
    ? <ProposalReview key={row.elicitationId} row={row} request={request} client={client} onDone={onDone} />
    : <ApprovalReview key={row.elicitationId} row={row} request={request} client={client} onDone={onDone} />;
}
