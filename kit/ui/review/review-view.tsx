import { REFUSAL_TEXT, type Reviewer } from '../labels.js';
import type { DecisionRefusal } from '../../../shared/wire-fields.js';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide, Decision } from '../../messages.js';
import { ApprovalReview } from './approval-review.js';
import { ConfirmReview } from './confirm-review.js';
import { FeedbackView, alreadyDecidedHere, type Feedback } from './decision-feedback.js';
import { FormAskReview } from './form-ask-review.js';
import { PermissionReview, type RuleSlot } from './permission-review.js';
import { ProposalReview } from './proposal-review.js';
import { VisibleText } from '../visible-text.js';
import { endedNote } from '../request-summary.js';
import { RequestDetail } from './request-detail.js';
import { SelectionReview } from './selection-review.js';

const FINAL_REFUSALS: ReadonlySet<DecisionRefusal> = new Set(['already_decided', 'expired', 'withdrawn', 'not_found']);

/**
 * `decide` sends the decision, whatever surface shows the review; `ruleEditor`: its decisions can carry a rule ("Always
 * allow…"), which only the extension's can (handed in, so the surfaces without one carry none of it). `here`: the
 * reviewer showing it (the extension, or the hub's phone page), so a note names the other one that decided.
 */
export function ReviewView({ row, decide, onShown, signPasskey, ruleEditor, onDone, here = 'extension' }: {
  row: RequestRow;
  decide: Decide;
  /** Told once this pending review is on the screen, with the hash of what it renders: the hub's ledger records it. */
  onShown?: (elicitationId: string, shownHash: string) => void;
  /**
   * For a request that needs a passkey: signs the decision (the surface's WebAuthn ceremony). Absent: the surface has
   * none, sends the decision as it is, and shows the hub's `passkey_required`.
   */
  signPasskey?: (row: RequestRow, decision: Decision) => Promise<{ ok: true; value: Decision } | { ok: false; message: string }>;
  ruleEditor?: RuleSlot;
  onDone?: () => void;
  here?: Reviewer | null;
}) {
  // The first decision made in this browser turns this review into its read-only detail at once; a second surface
  // whose decision was refused for it must still say so there, so the notice lives here, above both.
  const [notice, setNotice] = useState<Feedback | null>(null);
  const [closed, setClosed] = useState(false);
  const pending = row.status === 'pending';
  useEffect(() => {
    if (!pending || !onShown) return;
    let live = true;
    void import('../../../shared/shown-hash.js').then(async ({ shownHash }) => {
      const hash = await shownHash(row);
      if (live) onShown(row.elicitationId, hash);
    });
    return () => {
      live = false;
    };
    // Once per request shown; a new row object for the same request (a status change) is not a new showing.
  }, [row.elicitationId, pending]);
  // Every decision carries the hash of what this view renders (the row's request and template): the hub refuses it
  // (`shown_mismatch`) when that is not the request it holds, so a stale or altered view cannot decide.
  const watched = useCallback<Decide>(async (decision) => {
    // Loaded when a decision is made: the canonicalizer and SHA-256 stay out of the popup's first chunk.
    const { shownHash } = await import('../../../shared/shown-hash.js');
    let shown: Decision = { ...decision, shownHash: await shownHash(row) };
    if (row.assurance === 'passkey' && signPasskey) {
      const signed = await signPasskey(row, shown);
      // Nothing is sent without the person's passkey: the review says why and stays open.
      if (!signed.ok) return { state: 'error', message: signed.message };
      shown = signed.value;
    }
    const reply = await decide(shown);
    if (reply.state === 'already_decided_here') setNotice({ tone: 'alert', text: alreadyDecidedHere(reply.decision, reply.delivery) });
    // A refusal no second try can change (decided elsewhere, expired, withdrawn, gone): the buttons go at once, and the
    // review says why, rather than wait for the hub's news of the request's end.
    if (reply.state === 'answered' && !reply.ok && reply.reason && FINAL_REFUSALS.has(reply.reason)) {
      setNotice({ tone: 'alert', text: REFUSAL_TEXT[reply.reason] });
      setClosed(true);
    }
    return reply;
  }, [decide, row, signPasskey]);
  if (row.status !== 'pending' || row.delivery === 'queued' || closed) {
    // A queued decision explains itself in the detail ("Waiting for the hub…"); only a settled status needs the note.
    return (
      <>
        {notice && <FeedbackView feedback={notice} />}
        {row.status !== 'pending' && <p class="muted note"><VisibleText text={endedNote(row, here)} /></p>}
        <RequestDetail row={row} />
      </>
    );
  }
  // The row was checked against the request schema when it was read, so its request is used as it is. Keyed by id so
  // opening another request never carries this one's edits over: the key is its own attribute, since Preact takes a
  // vnode's key from there, never from a spread of props (a review reused for another request of the same kind kept
  // the first one's rows, which it would have sent).
  const { request } = row;
  const common = { row, decide: watched, onDone };
  const id = row.elicitationId;
  const review = (() => {
    switch (request.kind) {
      case 'proposal': return <ProposalReview key={id} {...common} request={request} />;
      case 'approval': return <ApprovalReview key={id} {...common} request={request} />;
      case 'confirm': return <ConfirmReview key={id} {...common} request={request} />;
      case 'form': return <FormAskReview key={id} {...common} request={request} />;
      case 'selection': return <SelectionReview key={id} {...common} request={request} />;
      // A rule cannot answer what needs a passkey, so none is offered for it.
      case 'permission': return <PermissionReview key={id} {...common} request={request} ruleEditor={row.assurance === 'passkey' ? undefined : ruleEditor} />;
    }
  })();
  if (row.assurance !== 'passkey') return review;
  return (
    <>
      <p class="note passkey-note" role="note">
        {signPasskey ? 'Deciding this asks for one of your passkeys: it signs exactly what you send.' : 'This request is decided only with a passkey: decide it in the browser extension.'}
      </p>
      {review}
    </>
  );
}
