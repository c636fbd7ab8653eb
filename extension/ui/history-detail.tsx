import type { ProposalRequest } from '../../shared/approval-input.js';
import type { ConfirmAsk, SelectionAsk } from '../../shared/ask-input.js';
import type { PermissionRequest } from '../../shared/permission.js';
import type { PropertySchema, RequestedSchema } from '../../shared/requested-schema.js';
import type { Rule } from '../../shared/rules.js';
import type { ElicitlyDb } from '../db/database.js';
import type { LocalOutcome, RequestRow, StoredRow } from '../../kit/rows/rows.js';
import { rulesById } from '../db/rules-repo.js';
import { useLiveQuery } from './use-live-query.js';
import { chosenValues, optionName, selectionRule } from '../../kit/ui/ask-words.js';
import { REFUSAL_TEXT } from '../../kit/ui/labels.js';
import { decisionSummary, requestSummary } from '../../kit/ui/request-summary.js';
import { displayValue } from '../../kit/ui/review/display-value.js';
import { SafeHtml } from '../../kit/ui/review/safe-html.js';
import { VisibleText } from '../../kit/ui/visible-text.js';
import { ContextJson } from '../../kit/ui/review/context-json.js';
import { PermissionSubject } from '../../kit/ui/review/permission-subject.js';
import '../../kit/ui/review/review.css';
import './history.css';

/** One field of a past proposal: what was proposed, what went to the agent, and whether it was included. */
export interface FieldLine {
  key: string;
  schema: PropertySchema;
  current: unknown;
  proposed: unknown;
  /** What was sent for it; undefined when nothing was (not included, rejected, or not known here). */
  submitted: unknown;
  /** null when there is no answer: the proposal was rejected, or decided where this browser could not see it. */
  included: boolean | null;
  /** Sent with another value than the one proposed: the person changed it. */
  edited: boolean;
}

function sameValue(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/**
 * A past proposal field by field, in the schema's order. Keys are the agent's: every lookup goes through a Map, so a
 * field named `constructor` or `__proto__` is a field like any other.
 */
export function proposalLines(request: ProposalRequest, outcome: LocalOutcome | undefined): FieldLine[] {
  const fields = new Map(Object.entries(request.fields));
  const values = new Map(Object.entries(outcome?.values ?? {}));
  const approved = outcome?.decision === 'approved';
  // A decision recorded without the list (older rows) included exactly what it sent.
  const included = approved ? new Set(outcome.included ?? values.keys()) : null;
  return Object.entries(request.requestedSchema.properties).map(([key, schema]) => {
    const isIncluded = included === null ? null : included.has(key);
    const submitted = isIncluded ? values.get(key) : undefined;
    return {
      key,
      schema,
      current: fields.get(key)?.current ?? null,
      proposed: schema.default,
      submitted,
      included: isIncluded,
      edited: isIncluded === true && !sameValue(submitted, schema.default),
    };
  });
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    // A value too deep to print still shows that it is there.
    return '(this value cannot be shown: it is nested too deeply)';
  }
}

function Value({ schema, value }: { schema: PropertySchema | undefined; value: unknown }) {
  const text = displayValue(schema, value);
  return text === '' ? <span class="muted">(blank)</span> : <VisibleText text={text} />;
}

function ProposalFields({ request, outcome }: { request: ProposalRequest; outcome: LocalOutcome | undefined }) {
  const lines = proposalLines(request, outcome);
  return (
    <table class="history-fields" aria-label="Fields">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col"><VisibleText text={request.columns.current.label} /></th>
          <th scope="col">Proposed</th>
          <th scope="col">Submitted</th>
          <th scope="col">Included</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line) => (
          <tr key={line.key} class={line.included === false ? 'excluded' : undefined}>
            <th scope="row"><VisibleText text={line.schema.title ?? line.key} /></th>
            <td><Value schema={line.schema} value={line.current} /></td>
            <td><Value schema={line.schema} value={line.proposed} /></td>
            <td>
              {line.included ? (
                <>
                  <Value schema={line.schema} value={line.submitted} />
                  {line.edited && <span class="edited"> (edited)</span>}
                </>
              ) : <span class="muted">not sent</span>}
            </td>
            <td>{line.included === null ? '—' : line.included ? 'Included' : 'Not included'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function FormFields({ schema, outcome }: { schema: RequestedSchema | null; outcome: LocalOutcome | undefined }) {
  const properties = Object.entries(schema?.properties ?? {});
  if (properties.length === 0) return null;
  const values = new Map(Object.entries(outcome?.values ?? {}));
  const sent = outcome?.decision === 'approved';
  return (
    <table class="history-fields" aria-label="Fields">
      <thead><tr><th scope="col">Field</th><th scope="col">Submitted</th></tr></thead>
      <tbody>
        {properties.map(([key, schema]) => (
          <tr key={key}>
            <th scope="row"><VisibleText text={schema.title ?? key} /></th>
            <td>{sent && values.has(key) ? <Value schema={schema} value={values.get(key)} /> : <span class="muted">not sent</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The two answers a question offered, in the agent's words, and which one the person gave. */
function ConfirmAnswers({ request, outcome }: { request: ConfirmAsk; outcome: LocalOutcome | undefined }) {
  const values = outcome?.decision === 'approved' ? outcome.values : undefined;
  const confirmed = values && Object.hasOwn(values, 'confirmed') ? values.confirmed : undefined;
  const answers = [{ label: request.labels.yes, means: 'yes', given: confirmed === true }, { label: request.labels.no, means: 'no', given: confirmed === false }];
  return (
    <table class="history-fields" aria-label="Answers">
      <thead><tr><th scope="col">Button</th><th scope="col">Answers</th><th scope="col">Given</th></tr></thead>
      <tbody>
        {answers.map((a) => (
          <tr key={a.means}>
            <th scope="row"><VisibleText text={a.label} /></th>
            <td>{a.means}</td>
            <td>{a.given ? 'Given' : <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Every option a choice offered, with the value each sends, and which were chosen. */
function SelectionAnswers({ request, outcome }: { request: SelectionAsk; outcome: LocalOutcome | undefined }) {
  const chosen = chosenValues(outcome?.decision === 'approved' ? outcome.values : undefined);
  return (
    <>
      <p>{selectionRule(request)}</p>
      <table class="history-fields" aria-label="Options">
        <thead><tr><th scope="col">Option</th><th scope="col">Value</th><th scope="col">Chosen</th></tr></thead>
        <tbody>
          {request.options.map((option) => (
            <tr key={option.value}>
              <th scope="row">
                <VisibleText text={optionName(option)} />
                {option.description && <div class="muted"><VisibleText text={option.description} /></div>}
              </th>
              <td><VisibleText text={option.value} /></td>
              <td>{chosen === null ? '—' : chosen.includes(option.value) ? 'Chosen' : <span class="muted">not chosen</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** What a host asked to run, and the input that ran when the person edited it. */
function PermissionAnswer({ request, outcome }: { request: PermissionRequest; outcome: LocalOutcome | undefined }) {
  const updated = outcome?.decision === 'approved' ? outcome.values?.updatedInput : undefined;
  return (
    <>
      <PermissionSubject request={request} />
      {updated !== undefined && (
        <>
          <h3>Ran with this input instead (edited)</h3>
          <ContextJson text={json(updated)} />
        </>
      )}
    </>
  );
}

/** What was asked, and what was sent back, for each kind. */
function Asked({ row, outcome }: { row: RequestRow; outcome: LocalOutcome | undefined }) {
  const { request } = row;
  switch (request.kind) {
    case 'proposal':
      return <ProposalFields request={request} outcome={outcome} />;
    case 'confirm':
      return <ConfirmAnswers request={request} outcome={outcome} />;
    case 'selection':
      return <SelectionAnswers request={request} outcome={outcome} />;
    case 'form':
      return <FormFields schema={request.requestedSchema} outcome={outcome} />;
    case 'permission':
      return <PermissionAnswer request={request} outcome={outcome} />;
    case 'approval':
      return (
        <>
          <FormFields schema={request.requestedSchema} outcome={outcome} />
          {request.context !== null && (
            <>
              <h3>Context</h3>
              <ContextJson text={json(request.context)} />
            </>
          )}
        </>
      );
  }
}

function Delivery({ row }: { row: RequestRow }) {
  if (row.delivery === 'queued') return <p role="status">Waiting for the hub to deliver this decision.</p>;
  if (!row.refusal) return null;
  return (
    <div class="error">
      <p>The hub did not take this browser's decision: {REFUSAL_TEXT[row.refusal.reason]}</p>
      {row.refusal.issues && row.refusal.issues.length > 0 && (
        <ul>{row.refusal.issues.map((issue, n) => <li key={n}><VisibleText text={issue.message} /></li>)}</ul>
      )}
    </div>
  );
}

/** A past request, read-only: what the agent asked, what the person decided, when, and what the agent received. */
export function HistoryDetail({ row, rules }: { row: StoredRow; rules?: ReadonlyMap<string, Rule> }) {
  const { outcome } = row;
  const summary = requestSummary(row);
  const decision = decisionSummary(row, rules);
  const decidedHere = outcome !== undefined && row.delivery !== 'refused';
  return (
    <section class="history-detail request-detail">
      <h2><VisibleText text={summary.title} /></h2>
      <dl aria-label="Request">
        <dt>Decision</dt>
        <dd>
          <span class={`verdict verdict-${decision.verdict}`}><VisibleText text={decision.label} /></span>
          {decision.note && <span class="muted"> · <VisibleText text={decision.note} /></span>}
        </dd>
        <dt>Kind</dt><dd>{summary.kind}{summary.mode === null ? '' : ` (${summary.mode})`}</dd>
        <dt>Agent</dt><dd><VisibleText text={summary.agent} /> <span class="muted">(pid {summary.pid})</span></dd>
        <dt>Created</dt><dd>{summary.created}</dd>
        {summary.decided !== null && <><dt>Decided</dt><dd>{summary.decided}</dd></>}
        {outcome?.comment && <><dt>{summary.commentTerm}</dt><dd><VisibleText text={outcome.comment} /></dd></>}
      </dl>
      {row.renderedTemplate !== null && <SafeHtml html={row.renderedTemplate} />}
      {!decidedHere && (decision.verdict === 'approved' || decision.verdict === 'rejected' || decision.verdict === 'unknown') && (
        <p class="muted">Decided by another reviewer: what was submitted is not known in this browser.</p>
      )}
      <Asked row={row} outcome={decidedHere ? outcome : undefined} />
      <Delivery row={row} />
    </section>
  );
}

/** The detail with the person's rules read live, to name the rule that decided it (loaded with the view, not the popup). */
export function HistoryDetailRoute({ db, row }: { db: ElicitlyDb; row: StoredRow }) {
  const rules = useLiveQuery(() => rulesById(db), [db]);
  return <HistoryDetail row={row} rules={rules} />;
}
