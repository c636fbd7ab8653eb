import { useId, useState } from 'preact/hooks';
import { selectionIssues, type SelectionAsk, type SelectionOption } from '../../../shared/ask-input.js';
import type { RequestRow } from '../../rows/rows.js';
import type { Decide } from '../../messages.js';
import { AnswerButton, AskFooter } from './ask-footer.js';
import { splitIssues } from './decision-feedback.js';
import { refusedAttempt } from './refused-attempt.js';
import { useReview } from './use-review.js';
import { optionName, selectionRule } from '../ask-words.js';
import { VisibleText } from '../visible-text.js';
import './review.css';

/** Past this many options a filter box helps find one; below it, it would only be in the way. */
export const FILTER_FROM = 11;
const KEY = 'selected';
const KEYS = [KEY];

function startingChoice(row: RequestRow, ask: SelectionAsk): readonly string[] {
  const attempt = refusedAttempt(row)?.values;
  const previous = attempt && Object.hasOwn(attempt, KEY) ? attempt[KEY] : undefined;
  if (Array.isArray(previous) && previous.every((v): v is string => typeof v === 'string')) return previous;
  return ask.default;
}

function matches(option: SelectionOption, words: string): boolean {
  return [option.label, option.value, option.description].some((text) => text !== undefined && text.toLocaleLowerCase().includes(words));
}

/**
 * A choice (elicit_selection): radios for one, checkboxes for several, each named by its label (its value when it has
 * none) with its description beside it. What is sent is the chosen options' values, in the options' order.
 */
export function SelectionReview({ row, request, decide, onDone }: {
  row: RequestRow;
  request: SelectionAsk;
  decide: Decide;
  onDone?: () => void;
}) {
  const id = useId();
  const [chosen, setChosen] = useState<readonly string[]>(() => startingChoice(row, request));
  const [filter, setFilter] = useState('');
  const ordered = (picked: readonly string[]) => [
    ...request.options.map((o) => o.value).filter((v) => picked.includes(v)),
    // A refused attempt may hold a value that is no longer an option: kept, so the check names it.
    ...picked.filter((v) => !request.options.some((o) => o.value === v)),
  ];
  const review = useReview(row, KEYS, decide, onDone, () => {
    const selected = ordered(chosen);
    const issues = selectionIssues(request, selected);
    return issues.length ? { ok: false, issues } : { ok: true, payload: { values: { selected } } };
  });
  const errors = review.issues.byKey.get(KEY);

  const choose = (next: readonly string[]) => {
    setChosen(next);
    const found = selectionIssues(request, ordered(next));
    // Messages already shown follow every change (and clear once it fits); of new ones only "too many" shows at once:
    // "choose at least 2" after the first tick would scold a person who is not done yet.
    const now = review.issues.byKey.has(KEY) ? found : found.filter((i) => i.rule === 'too_many');
    review.showFieldMessages(new Map([[KEY, splitIssues(now, KEYS).byKey.get(KEY) ?? []]]));
  };
  const toggle = (value: string, on: boolean) => choose(on ? [...chosen.filter((v) => v !== value), value] : chosen.filter((v) => v !== value));

  const words = filter.trim().toLocaleLowerCase();
  const filtering = request.options.length >= FILTER_FROM;
  // A chosen option stays in view whatever the filter says: the person always sees what will be sent.
  const shown = filtering && words ? request.options.filter((o) => chosen.includes(o.value) || matches(o, words)) : request.options;
  const errorId = `${id}-error`;

  const onKeyDown = (e: KeyboardEvent) => {
    // Enter on a radio is unambiguous once one is picked: that one is the answer. A checkbox's Enter is not (Space ticks it).
    if (e.key !== 'Enter' || e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
    const target = e.target;
    if (request.multiple || !(target instanceof HTMLInputElement) || target.type !== 'radio' || chosen.length !== 1) return;
    e.preventDefault();
    review.footer.onOk();
  };

  return (
    <section class="review ask-review" ref={review.root}>
      <h2 class="review-message"><VisibleText text={row.message} /></h2>
      {filtering && (
        <input
          type="search"
          class="choice-filter"
          aria-label="Filter options"
          placeholder={`Filter ${request.options.length} options`}
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      )}
      <fieldset class="choices" onKeyDown={onKeyDown}>
        <legend>{selectionRule(request)}{request.multiple ? <span class="muted"> · {chosen.length} chosen</span> : null}</legend>
        {shown.map((option) => {
          const index = request.options.indexOf(option);
          const inputId = `${id}-option-${index}`;
          const descId = `${id}-desc-${index}`;
          const valueId = `${id}-value-${index}`;
          const labelled = option.label !== undefined && option.label !== option.value;
          const describedBy = [option.description ? descId : '', labelled ? valueId : '', errors ? errorId : ''].filter(Boolean).join(' ');
          const common = {
            id: inputId,
            value: option.value,
            checked: chosen.includes(option.value),
            disabled: review.frozen,
            'aria-describedby': describedBy || undefined,
            'aria-invalid': errors ? ('true' as const) : undefined,
          };
          return (
            <div class="choice" key={option.value}>
              {request.multiple
                ? <input type="checkbox" {...common} onChange={(e) => toggle(option.value, e.currentTarget.checked)} />
                : <input type="radio" name={`${id}-choice`} {...common} onChange={() => choose([option.value])} />}
              <label for={inputId}><VisibleText text={optionName(option)} /></label>
              {labelled && <code id={valueId} class="choice-value" title="The value sent to the agent"><VisibleText text={option.value} /></code>}
              {option.description && <div id={descId} class="description muted"><VisibleText text={option.description} /></div>}
            </div>
          );
        })}
        {shown.length === 0 && <p class="muted">No option matches “<VisibleText text={filter.trim()} />”.</p>}
      </fieldset>
      {filtering && <p class="muted choice-count" role="status">{`Showing ${shown.length} of ${request.options.length} options`}</p>}
      {errors && <div id={errorId} class="field-error"><VisibleText text={errors.join(' ')} /></div>}
      <AskFooter review={review} keys={request.multiple ? 'Ctrl+Enter submits · Esc dismisses' : 'Enter or Ctrl+Enter submits · Esc dismisses'}>
        <AnswerButton label="Submit" hint={request.multiple ? 'sends the chosen options' : 'sends the chosen option'} primary disabled={review.frozen} onClick={review.footer.onOk} />
      </AskFooter>
    </section>
  );
}
