import type { ReviewRequest } from '../../../shared/review-request.js';
import type { PropertySchema } from '../../../shared/requested-schema.js';
import type { RequestRow } from '../../rows/rows.js';
import { displayValue } from './display-value.js';
import { SafeHtml } from './safe-html.js';
import { chosenNames, optionName, selectionRule } from '../ask-words.js';
import { REFUSAL_TEXT } from '../labels.js';
import { decidedText, requestSummary, statusText } from '../request-summary.js';
import { VisibleText } from '../visible-text.js';
import { ContextJson } from './context-json.js';
import { jsonText, PermissionSubject } from './permission-subject.js';
import './review.css';

function json(v: unknown): string {
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

function propertiesOf(request: ReviewRequest): Record<string, PropertySchema> {
  if (request.kind === 'confirm' || request.kind === 'selection' || request.kind === 'permission') return {};
  return request.requestedSchema?.properties ?? {};
}

function Asked({ row, request }: { row: RequestRow; request: ReviewRequest }) {
  const template = row.renderedTemplate !== null ? <SafeHtml html={row.renderedTemplate} /> : null;
  if (request.kind === 'proposal') {
    return (
      <>
        {template}
        <table aria-label="Proposed values">
          <thead><tr><th scope="col">Field</th><th scope="col">Proposed</th></tr></thead>
          <tbody>
            {Object.entries(request.requestedSchema.properties).map(([key, p]) => (
              <tr key={key}><th scope="row"><VisibleText text={p.title ?? key} /></th><td><VisibleText text={displayValue(p, p.default)} /></td></tr>
            ))}
          </tbody>
        </table>
      </>
    );
  }
  if (request.kind === 'confirm') {
    return <p>Answers offered: “<VisibleText text={request.labels.yes} />” (yes) or “<VisibleText text={request.labels.no} />” (no)</p>;
  }
  if (request.kind === 'selection') {
    return (
      <>
        <p>{selectionRule(request)} of: <VisibleText text={request.options.map(optionName).join(', ')} /></p>
        {request.default.length > 0 && <p>Preselected: <VisibleText text={chosenNames(request, request.default)} /></p>}
      </>
    );
  }
  if (request.kind === 'permission') return <PermissionSubject request={request} />;
  if (request.kind === 'form') {
    const names = Object.entries(request.requestedSchema.properties).map(([key, p]) => p.title ?? key);
    return <p>Asked for: <VisibleText text={names.join(', ')} /></p>;
  }
  const context = request.context === null ? null : <ContextJson text={json(request.context)} />;
  const fields = request.requestedSchema ? Object.entries(request.requestedSchema.properties) : [];
  return (
    <>
      {template ?? context}
      {fields.length > 0 && <p>Asked for: <VisibleText text={fields.map(([key, p]) => p.title ?? key).join(', ')} /></p>}
    </>
  );
}

function Decided({ row, request }: { row: RequestRow; request: ReviewRequest }) {
  const { outcome } = row;
  if (!outcome) return <p>No decision was made here.</p>;
  if (request.kind === 'permission') {
    const updated = outcome.decision === 'approved' ? outcome.values?.updatedInput : undefined;
    return (
      <>
        <p>Decision: <strong>{decidedText(request, outcome)}{updated !== undefined ? ', with an edited input' : ''}</strong></p>
        {updated !== undefined && <pre class="context-json" aria-label="Edited input" tabIndex={0}><VisibleText text={jsonText(updated)} /></pre>}
        {outcome.comment && <p>Reason: <VisibleText text={outcome.comment} /></p>}
      </>
    );
  }
  const props = propertiesOf(request);
  // A question's or a choice's answer is said in words; a form's values are listed like an approval's.
  const values = request.kind === 'confirm' || request.kind === 'selection' ? [] : Object.entries(outcome.values ?? {});
  return (
    <>
      <p>Decision: <strong><VisibleText text={decidedText(request, outcome)} /></strong></p>
      {values.length > 0 && (
        <dl aria-label="Values sent">
          {values.map(([key, v]) => {
            const p = props[key];
            return [<dt key={`t-${key}`}><VisibleText text={p?.title ?? key} /></dt>, <dd key={`d-${key}`}><VisibleText text={displayValue(p, v)} /></dd>];
          })}
        </dl>
      )}
      {outcome.comment && <p>Comment: <VisibleText text={outcome.comment} /></p>}
    </>
  );
}

export function RequestDetail({ row }: { row: RequestRow }) {
  const { request } = row;
  const summary = requestSummary(row);
  return (
    <section class="review request-detail">
      <h2 class="review-message"><VisibleText text={summary.title} /></h2>
      <dl aria-label="Request">
        <dt>Kind</dt><dd>{summary.kind}</dd>
        <dt>Agent</dt><dd><VisibleText text={summary.agent} /></dd>
        <dt>Created</dt><dd>{summary.created}</dd>
        {summary.decided !== null && <><dt>Decided</dt><dd>{summary.decided}</dd></>}
        <dt>Status</dt><dd><VisibleText text={statusText(row)} /></dd>
      </dl>
      <h3>What was asked</h3>
      <Asked row={row} request={request} />
      <h3>What was decided</h3>
      <Decided row={row} request={request} />
      {row.delivery === 'queued' && <p role="status">Waiting for the hub to deliver this decision.</p>}
      {row.refusal && (
        <div class="error">
          <p>The hub did not take this decision: {REFUSAL_TEXT[row.refusal.reason]}</p>
          {row.refusal.issues && row.refusal.issues.length > 0 && (
            <ul class="issues">{row.refusal.issues.map((i, n) => <li key={n}><VisibleText text={i.message} /></li>)}</ul>
          )}
        </div>
      )}
    </section>
  );
}
