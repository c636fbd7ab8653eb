import { useId, useMemo, useState } from 'preact/hooks';
import type { ProposalRequest } from '../../../shared/approval-input.js';
import { checkDecisionValues } from '../../../shared/approval-input.js';
import {
  acceptAll, includedCount, initialRows, isEmptyValue, rejectAll, restoreCurrent, restoreProposed, resumeRows, sourceDiffers,
  submission, useSource as takeSource, type GridRow,
} from '../../../shared/proposal-grid.js';
import type { RequestRow } from '../../db/rows.js';
import type { BackgroundClient } from '../../messages.js';
import { displayValue } from './display-value.js';
import { FieldEditor } from './field-editor.js';
import { ReviewFooter } from './review-footer.js';
import { SafeHtml } from './safe-html.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { revealHidden } from '../../../shared/visible-text.js';
import { VisibleText } from '../visible-text.js';
import './review.css';

export function ProposalReview({ row, request, client, onDone }: {
  row: RequestRow;
  request: ProposalRequest;
  client: BackgroundClient;
  onDone?: () => void;
}) {
  const keys = useMemo(() => Object.keys(request.requestedSchema.properties), [request]);
  const [rows, setRows] = useState<GridRow[]>(() => {
    const attempt = refusedAttempt(row);
    return attempt ? resumeRows(initialRows(request), attempt) : initialRows(request);
  });
  const id = useId();
  const review = useReview(row, keys, client, onDone, () => {
    const { included: keysIncluded, values } = submission(rows);
    const checked = checkDecisionValues(request, values, keysIncluded);
    return checked.ok ? { ok: true, payload: { values, included: keysIncluded } } : checked;
  });
  const { issues } = review;
  const { included, total } = includedCount(rows);

  const update = (i: number, next: (r: GridRow) => GridRow, clearIssue = false) => {
    setRows((prev) => prev.map((r, j) => (j === i ? next(r) : r)));
    const key = rows[i]?.key;
    if (clearIssue && key !== undefined) review.clearIssue(key);
  };

  const { sources, current: currentColumn } = request.columns;

  return (
    <section class="review proposal-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      {row.renderedTemplate !== null && <SafeHtml html={row.renderedTemplate} />}

      <div class="grid-actions">
        <button type="button" onClick={() => setRows(acceptAll(rows))}>Accept All</button>
        <button type="button" onClick={() => setRows(rejectAll(rows))}>Reject All</button>
        <button type="button" onClick={() => { setRows(restoreProposed(rows, request)); review.clearFieldIssues(); }}>Restore Proposed</button>
        <span class="counter" aria-live="polite">{included} of {total} included</span>
      </div>

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
              const schema = request.requestedSchema.properties[r.key];
              if (!schema) return null;
              const field = request.fields[r.key];
              const current = field?.current ?? null;
              const errors = issues.byKey[r.key];
              const errorId = `${id}-error-${i}`;
              const title = revealHidden(r.title);
              return (
                <tr key={r.key} class={r.included ? 'included' : 'excluded'}>
                  <th scope="row"><VisibleText text={r.title} /></th>
                  {sources.map((s) => {
                    const value = field?.sources[s.key];
                    const has = value !== undefined && value !== null;
                    return (
                      <td
                        key={s.key}
                        class={`source${sourceDiffers(value, current) ? ' differs' : ''}`}
                        aria-label={`${revealHidden(s.label)}: ${title}`}
                        title={has ? 'Double-click to use as proposed value.' : undefined}
                        onDblClick={has ? () => update(i, (g) => takeSource(g, value), true) : undefined}
                      >
                        <VisibleText text={displayValue(schema, value)} />
                      </td>
                    );
                  })}
                  {isEmptyValue(current) ? (
                    <td class="current" aria-label={`${revealHidden(currentColumn.label)}: ${title}`}><VisibleText text={displayValue(schema, current)} /></td>
                  ) : (
                    <td
                      class="current"
                      aria-label={`${revealHidden(currentColumn.label)}: ${title}`}
                      title="Double-click to restore the current value."
                      onDblClick={() => update(i, (g) => restoreCurrent(g, current), true)}
                    >
                      <VisibleText text={displayValue(schema, current)} />
                    </td>
                  )}
                  <td class="proposed">
                    <FieldEditor
                      schema={schema}
                      value={r.proposed}
                      label={`Proposed ${r.title}`}
                      invalid={errors !== undefined}
                      describedBy={errors ? errorId : undefined}
                      onChange={(v) => update(i, (g) => ({ ...g, proposed: v, included: true }), true)}
                    />
                    {errors && <div id={errorId} class="field-error"><VisibleText text={errors.join(' ')} /></div>}
                  </td>
                  <td class="include">
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
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      <ReviewFooter {...review.footer} labels={request.labels} />
    </section>
  );
}
