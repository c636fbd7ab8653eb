import { useId, useMemo, useRef, useState } from 'preact/hooks';
import type { ProposalRequest } from '../../../shared/approval-input.js';
import { checkDecisionValues } from '../../../shared/approval-input.js';
import { convertForField } from '../../core/convert-value.js';
import { ownEntry } from '../../core/own-entry.js';
import {
  acceptAll, editProposed, includedCount, initialRows, isEmptyValue, rejectAll, restoreCurrent, restoreProposed, resumeRows,
  sourceDiffers, submission, useSource as takeSource, type GridRow,
} from '../../core/proposal-grid.js';
import type { PropertySchema } from '../../../shared/requested-schema.js';
import type { RequestRow } from '../../db/rows.js';
import type { Decide } from '../../messages.js';
import { fieldMessages } from './decision-feedback.js';
import { displayValue } from './display-value.js';
import { FieldEditor } from './field-editor.js';
import { ReviewFooter } from './review-footer.js';
import { SafeHtml } from './safe-html.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { revealHidden } from '../../core/visible-text.js';
import { VisibleText } from '../visible-text.js';
import './review.css';

const HINTS = { ok: 'approves: sends the included fields', cancel: 'rejects: changes nothing' };

/** A double-click that could not copy: which cell (row index; column index, Current after the sources) and why. */
interface Refusal { row: number; column: number; reason: string }

export function ProposalReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: ProposalRequest;
  decide: Decide;
  onDone?: () => void;
}) {
  const keys = useMemo(() => Object.keys(request.requestedSchema.properties), [request]);
  const [rows, setRows] = useState<GridRow[]>(() => {
    const attempt = refusedAttempt(row);
    return attempt ? resumeRows(initialRows(request), attempt) : initialRows(request);
  });
  // Changes build on the newest rows even before the re-render that shows them (two events in one frame).
  const latest = useRef(rows);
  const id = useId();
  const review = useReview(row, keys, decide, onDone, () => {
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

  const { sources, current: currentColumn } = request.columns;
  const currentLabel = revealHidden(currentColumn.label);
  const refusalIn = (i: number, column: number) => (refusal?.row === i && refusal.column === column ? (
    <div class="copy-refusal" role="alert">Not copied: <VisibleText text={refusal.reason} />.</div>
  ) : null);

  return (
    <section class="review proposal-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
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
            {sources.map((s) => <col class="source" key={s.key} />)}
            <col class="current" />
            <col class="proposed" />
            <col class="include" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Field</th>
              {sources.map((s) => <th scope="col" key={s.key}><VisibleText text={s.label} /></th>)}
              <th scope="col"><VisibleText text={currentColumn.label} /></th>
              <th scope="col">Proposed</th>
              <th scope="col">Include</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => {
              const schema = ownEntry(request.requestedSchema.properties, r.key);
              if (!schema) return null;
              const field = ownEntry(request.fields, r.key);
              const current = field?.current ?? null;
              const errors = issues.byKey.get(r.key);
              const errorId = `${id}-error-${i}`;
              const editorId = `${id}-proposed-${i}`;
              const title = revealHidden(r.title);
              return (
                <tr key={r.key} class={r.included ? 'included' : 'excluded'}>
                  <th scope="row"><VisibleText text={r.title} /></th>
                  {sources.map((s, column) => {
                    const value = ownEntry(field?.sources, s.key);
                    const has = value !== undefined && value !== null;
                    return (
                      <td
                        key={s.key}
                        class={`source${sourceDiffers(value, current) ? ' differs' : ''}`}
                        data-label={revealHidden(s.label)}
                        aria-label={`${revealHidden(s.label)}: ${title}`}
                        title={has ? 'Double-click to use as proposed value.' : undefined}
                        onDblClick={has ? () => copyCell(i, column, schema, value, takeSource) : undefined}
                      >
                        <VisibleText text={displayValue(schema, value)} />
                        {refusalIn(i, column)}
                      </td>
                    );
                  })}
                  {isEmptyValue(current) ? (
                    <td class="current" data-label={currentLabel} aria-label={`${currentLabel}: ${title}`}><VisibleText text={displayValue(schema, current)} /></td>
                  ) : (
                    <td
                      class="current"
                      data-label={currentLabel}
                      aria-label={`${currentLabel}: ${title}`}
                      title="Double-click to restore the current value."
                      onDblClick={() => copyCell(i, sources.length, schema, current, restoreCurrent)}
                    >
                      <VisibleText text={displayValue(schema, current)} />
                      {refusalIn(i, sources.length)}
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
                      onChange={(v) => update(i, (g) => editProposed(g, v))}
                    />
                    {errors && <div id={errorId} class="field-error"><VisibleText text={errors.join(' ')} /></div>}
                  </td>
                  <td class="include">
                    <label>
                      <input
                        type="checkbox"
                        aria-label={`Include ${title}`}
                        title={r.locked ? 'Required, and the record has no value yet.' : undefined}
                        checked={r.included || r.locked}
                        disabled={r.locked}
                        onChange={(e) => {
                          const on = e.currentTarget.checked;
                          update(i, (g) => ({ ...g, included: g.locked || on }));
                        }}
                      />
                      <span class="card-label">Include</span>
                    </label>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      <ReviewFooter {...review.footer} labels={request.labels} hints={HINTS} />
    </section>
  );
}
