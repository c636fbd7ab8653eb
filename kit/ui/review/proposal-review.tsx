import { Component } from 'preact';
import { useId, useMemo, useRef, useState } from 'preact/hooks';
import { checkDecisionValues, type ProposalRequest } from '../../../shared/approval-input.js';
import { convertForField } from '../../core/convert-value.js';
import { ownEntry } from '../../core/own-entry.js';
import {
  acceptAll, editProposed, includedCount, initialRows, isEmptyValue, rejectAll, restoreCurrent, restoreProposed, resumeRows,
  sourceDiffers, submission, useSource as takeSource, type GridRow,
} from '../../core/proposal-grid.js';
import type { PropertySchema } from '../../../shared/requested-schema.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide } from '../../messages.js';
import { fieldMessages } from './decision-feedback.js';
import { displayValue } from './display-value.js';
import { FieldEditor } from './field-editor.js';
import { ReviewFooter } from './review-footer.js';
import { SafeHtml } from './safe-html.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { revealHidden } from '../../core/visible-text.js';
import { visibleChildren } from '../visible-text.js';
import './review.css';

const HINTS = { ok: 'approves: sends the included fields', cancel: 'rejects: changes nothing' };

/** A double-click that could not copy: which cell (row index; column index, Current after the sources) and why. */
interface Refusal { row: number; column: number; reason: string }

/** A Source column: its label as written (the header shows it) and with hidden characters as tokens (for attributes). */
interface Column { key: string; label: string; shown: string }

/** What a row's read-only cells show: it depends on the request alone, so it is worked out once, not at every render. */
interface RowFacts {
  schema: PropertySchema;
  /** The title with hidden characters as tokens, for the cells' accessible names. */
  title: string;
  sources: { value: unknown; has: boolean; text: string; differs: boolean }[];
  current: unknown;
  currentText: string;
}

interface GridFacts {
  keys: string[];
  columns: Column[];
  currentLabel: string;
  rows: Map<string, RowFacts>;
}

function gridFacts(request: ProposalRequest): GridFacts {
  const { properties } = request.requestedSchema;
  const columns = request.columns.sources.map((s) => ({ key: s.key, label: s.label, shown: revealHidden(s.label) }));
  const rows = new Map<string, RowFacts>();
  for (const [key, schema] of Object.entries(properties)) {
    const field = ownEntry(request.fields, key);
    const current = field?.current ?? null;
    rows.set(key, {
      schema,
      title: revealHidden(schema.title ?? key),
      sources: columns.map((c) => {
        const value = ownEntry(field?.sources, c.key);
        return { value, has: value !== undefined && value !== null, text: displayValue(schema, value), differs: sourceDiffers(value, current) };
      }),
      current,
      currentText: displayValue(schema, current),
    });
  }
  return { keys: Object.keys(properties), columns, currentLabel: revealHidden(request.columns.current.label), rows };
}

/** What a row asks of the grid; one object for the grid's life, so an unchanged row is not rendered again. */
interface RowActions {
  edit(i: number, value: unknown): void;
  include(i: number, on: boolean): void;
  copy(i: number, column: number, schema: PropertySchema, value: unknown, take: (g: GridRow, v: unknown) => GridRow): void;
}

interface RowProps {
  row: GridRow;
  index: number;
  facts: RowFacts;
  columns: Column[];
  currentLabel: string;
  editorId: string;
  errorId: string;
  errors: readonly string[] | undefined;
  /** This row's refused copy, if any. */
  refusal: Refusal | null;
  actions: RowActions;
}

function refusalIn(refusal: Refusal | null, column: number) {
  return refusal?.column === column ? (
    <div class="copy-refusal" role="alert">Not copied: {visibleChildren(refusal.reason)}.</div>
  ) : null;
}

/**
 * One field of the grid. A change re-renders the rows it touched, not all of them: every prop is either the row's own
 * state or shared by the whole grid for as long as the request is the same.
 */
class ProposalRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const now = this.props;
    return (Object.keys(next) as (keyof RowProps)[]).some((k) => next[k] !== now[k]);
  }

  override render({ row: r, index: i, facts, columns, currentLabel, editorId, errorId, errors, refusal, actions }: RowProps) {
    const { schema, title } = facts;
    return (
      <tr class={r.included ? 'included' : 'excluded'}>
        <th scope="row">{visibleChildren(r.title)}</th>
        {columns.map((s, column) => {
          const cell = facts.sources[column];
          return (
            <td
              key={s.key}
              class={cell?.differs ? 'source differs' : 'source'}
              data-label={s.shown}
              aria-label={`${s.shown}: ${title}`}
              title={cell?.has ? 'Double-click to use as proposed value.' : undefined}
              onDblClick={cell?.has ? () => actions.copy(i, column, schema, cell.value, takeSource) : undefined}
            >
              {visibleChildren(cell?.text ?? '')}
              {refusalIn(refusal, column)}
            </td>
          );
        })}
        {isEmptyValue(facts.current) ? (
          <td class="current" data-label={currentLabel} aria-label={`${currentLabel}: ${title}`}>{visibleChildren(facts.currentText)}</td>
        ) : (
          <td
            class="current"
            data-label={currentLabel}
            aria-label={`${currentLabel}: ${title}`}
            title="Double-click to restore the current value."
            onDblClick={() => actions.copy(i, columns.length, schema, facts.current, restoreCurrent)}
          >
            {visibleChildren(facts.currentText)}
            {refusalIn(refusal, columns.length)}
          </td>
        )}
        <td class="proposed">
          <label class="card-label" for={editorId}>Proposed</label>
          <FieldEditor
            id={editorId}
            schema={schema}
            value={r.proposed}
            label={`Proposed ${r.title}`}
            invalid={errors !== undefined}
            describedBy={errors ? errorId : undefined}
            onChange={(v) => actions.edit(i, v)}
          />
          {errors && <div id={errorId} class="field-error">{visibleChildren(errors.join(' '))}</div>}
        </td>
        <td class="include">
          <label>
            <input
              type="checkbox"
              aria-label={`Include ${title}`}
              title={r.locked ? 'Required, and the record has no value yet.' : undefined}
              checked={r.included || r.locked}
              disabled={r.locked}
              onChange={(e) => actions.include(i, e.currentTarget.checked)}
            />
            <span class="card-label">Include</span>
          </label>
        </td>
      </tr>
    );
  }
}

export function ProposalReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: ProposalRequest;
  decide: Decide;
  onDone?: () => void;
}) {
  const facts = useMemo(() => gridFacts(request), [request]);
  const [rows, setRows] = useState<GridRow[]>(() => {
    const attempt = refusedAttempt(row);
    return attempt ? resumeRows(initialRows(request), attempt) : initialRows(request);
  });
  // Changes build on the newest rows even before the re-render that shows them (two events in one frame).
  const latest = useRef(rows);
  const id = useId();
  const review = useReview(row, facts.keys, decide, onDone, () => {
    const { included: keysIncluded, values } = submission(latest.current);
    const checked = checkDecisionValues(request, values, keysIncluded);
    return checked.ok ? { ok: true, payload: { values, included: keysIncluded } } : checked;
  });
  const { issues } = review;
  const { included, total } = includedCount(rows);
  const [refusal, setRefusal] = useState<Refusal | null>(null);

  /**
   * Every change to the grid goes through here, so the messages next to the fields follow what would be sent: a row
   * that is (or stays) included with a new value is checked by the shared validator at once, one left out loses its.
   */
  const commit = (next: GridRow[]) => {
    const prev = latest.current;
    const checks = new Map<string, string[]>();
    next.forEach((n, i) => {
      const before = prev[i];
      if (!n.included) {
        if (before?.included) checks.set(n.key, []);
      } else if (!before?.included || before.proposed !== n.proposed) {
        checks.set(n.key, fieldMessages(request.requestedSchema, n.key, n.proposed));
      }
    });
    latest.current = next;
    setRows(next);
    setRefusal(null);
    review.showFieldMessages(checks);
  };
  const update = (i: number, next: (r: GridRow) => GridRow) => commit(latest.current.map((r, j) => (j === i ? next(r) : r)));

  /** Double-click: the cell's value converted to the field's type, or the reason it cannot be, shown in the cell. */
  const copyCell = (i: number, column: number, schema: PropertySchema, value: unknown, take: (g: GridRow, v: unknown) => GridRow) => {
    const converted = convertForField(schema, value);
    if (!converted.ok) {
      setRefusal({ row: i, column, reason: converted.reason });
      return;
    }
    update(i, (g) => take(g, converted.value));
  };

  // The rows get one actions object for good; it calls this render's functions, which see the newest state.
  const current = useRef({ update, copyCell });
  current.current = { update, copyCell };
  const [actions] = useState<RowActions>(() => ({
    edit: (i, v) => current.current.update(i, (g) => editProposed(g, v)),
    include: (i, on) => current.current.update(i, (g) => ({ ...g, included: g.locked || on })),
    copy: (i, column, schema, value, take) => current.current.copyCell(i, column, schema, value, take),
  }));

  const { columns, currentLabel } = facts;

  return (
    <section class="review proposal-review" ref={review.root}>
      <h2 class="review-message">{visibleChildren(row.message)}</h2>
      {row.renderedTemplate !== null && <SafeHtml html={row.renderedTemplate} />}

      <div class="grid-actions">
        <button type="button" onClick={() => commit(acceptAll(latest.current))}>Accept All</button>
        <button type="button" onClick={() => commit(rejectAll(latest.current))}>Reject All</button>
        <button type="button" onClick={() => commit(restoreProposed(latest.current, request))}>Restore Proposed</button>
        <span class="counter" aria-live="polite">{included} of {total} included</span>
      </div>

      {/* One table for both layouts: in a narrow frame review.css shows each row as a card, its cells labelled by
          data-label and .card-label. The same editors either way, so what the person sees is what is sent. */}
      <div class="grid-scroll">
        <table class="proposal-grid" aria-label="Proposed changes">
          <colgroup>
            <col class="field" />
            {columns.map((s) => <col class="source" key={s.key} />)}
            <col class="current" />
            <col class="proposed" />
            <col class="include" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Field</th>
              {columns.map((s) => <th scope="col" key={s.key}>{visibleChildren(s.label)}</th>)}
              <th scope="col">{visibleChildren(request.columns.current.label)}</th>
              <th scope="col">Proposed</th>
              <th scope="col">Include</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => {
              const rowFacts = facts.rows.get(r.key);
              return rowFacts && (
                <ProposalRow
                  key={r.key}
                  row={r}
                  index={i}
                  facts={rowFacts}
                  columns={columns}
                  currentLabel={currentLabel}
                  editorId={`${id}-proposed-${i}`}
                  errorId={`${id}-error-${i}`}
                  errors={issues.byKey.get(r.key)}
                  refusal={refusal?.row === i ? refusal : null}
                  actions={actions}
                />
              );
            })}
          </tbody>
        </table>
      </div>

      <ReviewFooter {...review.footer} labels={request.labels} hints={HINTS} />
    </section>
  );
}
