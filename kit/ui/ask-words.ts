import type { Ask, SelectionAsk, SelectionOption } from '../../shared/ask-input.js';
import type { LocalOutcome } from '../rows/rows.js';
import { ASK_WORD } from './labels.js';

/** An option as a person reads it: its label, or its value when the agent gave none. */
export function optionName(option: SelectionOption): string {
  return option.label ?? option.value;
}

/** A choice's bounds in words, shown above its options and in its history. */
export function selectionRule(ask: SelectionAsk): string {
  if (!ask.multiple) return 'Choose one';
  const { minSelected: min, maxSelected: max } = ask;
  const all = ask.options.length;
  if (min === max) return `Choose exactly ${min}`;
  if (min === 0) return max >= all ? 'Choose any' : `Choose up to ${max}`;
  return max >= all ? `Choose at least ${min}` : `Choose ${min} to ${max}`;
}

/** The values an answer chose, if it says (a list of strings under `selected`). */
export function chosenValues(values: Readonly<Record<string, unknown>> | undefined): string[] | null {
  const selected = values && Object.hasOwn(values, 'selected') ? values.selected : undefined;
  return Array.isArray(selected) && selected.every((v): v is string => typeof v === 'string') ? selected : null;
}

const NAMED = 3;

/** The chosen options by name, in the order sent; past a few, how many more (a history cell has little room). */
export function chosenNames(ask: SelectionAsk, selected: readonly string[]): string {
  const names = selected.map((value) => {
    const option = ask.options.find((o) => o.value === value);
    return option ? optionName(option) : value;
  });
  if (names.length === 0) return 'nothing';
  return names.length > NAMED + 1 ? `${names.slice(0, NAMED).join(', ')} and ${names.length - NAMED} more` : names.join(', ');
}

/**
 * What the person answered to an ask, as the history and the detail name it: the agent's own words for a yes or a no,
 * the options chosen, or just "Answered" when this browser does not know the answer (it was given elsewhere).
 * `outcome` is this browser's decision when it is the one the hub took.
 */
export function answerLabel(ask: Ask, decision: 'approved' | 'rejected', outcome: LocalOutcome | undefined): string {
  if (decision === 'rejected') return ASK_WORD.rejected;
  const values = outcome?.decision === 'approved' ? outcome.values : undefined;
  if (ask.kind === 'confirm') {
    const confirmed = values && Object.hasOwn(values, 'confirmed') ? values.confirmed : undefined;
    if (confirmed === true) return `${ASK_WORD.approved}: ${ask.labels.yes}`;
    if (confirmed === false) return `${ASK_WORD.approved}: ${ask.labels.no}`;
    return ASK_WORD.approved;
  }
  if (ask.kind === 'selection') {
    const selected = chosenValues(values);
    return selected ? `Chose: ${chosenNames(ask, selected)}` : ASK_WORD.approved;
  }
  return ASK_WORD.approved;
}
