import { useMemo } from 'preact/hooks';
import { dryRun, type DryRunAnswer, type QuestionRow } from '../../shared/rule-history.js';
import type { RuleDraft } from '../../shared/rules.js';
import type { ElicitlyDb } from '../db/database.js';
import { dateTime } from '../../kit/ui/format-time.js';
import { useQuestionHistory } from './use-question-history.js';
import { VisibleText } from '../../kit/ui/visible-text.js';

/** How many answered questions are listed; those answered the other way from the person come first. */
export const DRY_RUN_SHOWN = 20;
/** A listed command is cut here: the list is for recognising it, the history has it whole. */
const CLIP = 200;

const clip = (text: string) => (text.length > CLIP ? `${text.slice(0, CLIP)}…` : text);

function note(answer: DryRunAnswer, effect: RuleDraft['effect']): string {
  if (answer.differs) return effect === 'allow' ? 'You denied this; the rule would allow it' : 'You allowed this; the rule would deny it';
  if (answer.byRule) return 'Answered by one of your rules';
  if (answer.person === 'approved') return 'You allowed it';
  if (answer.person === 'rejected') return 'You denied it';
  return 'Not answered';
}

/**
 * The draft tried on the person's recent permission prompts before it is saved: how many it would have answered, a
 * list of them (the agent's text as text), and those it would have answered the other way from the person, flagged.
 * `rows` undefined: still reading; null: the history could not be read.
 */
export function DryRunView({ rows, draft }: { rows: QuestionRow[] | null | undefined; draft: RuleDraft }) {
  const key = JSON.stringify(draft);
  // Tried again only when the rule changes, not on every tick of a parent's clock.
  const result = useMemo(() => (rows ? dryRun(draft, rows, Date.now()) : undefined), [rows, key]);
  if (rows === undefined) return <p class="muted dry-run" role="status">Trying the rule on your history…</p>;
  if (rows === null || result === undefined) return <p class="muted dry-run">Your history could not be read, so this rule was not tried on it.</p>;
  if (result.asked === 0) return <p class="muted dry-run">No permission prompts in your history yet to try this rule on.</p>;
  const { answered, asked, differing } = result;
  const shown = [...answered.filter((a) => a.differs), ...answered.filter((a) => !a.differs)].slice(0, DRY_RUN_SHOWN);
  return (
    <section class="dry-run" aria-label="Dry run">
      <p role="status">
        <strong>Would have answered {answered.length} of your last {asked} {asked === 1 ? 'question' : 'questions'}</strong>
        {differing > 0 && <span class="differs-text">; {differing} of them the other way from you</span>}
      </p>
      {shown.length > 0 && (
        <ul class="dry-run-list" aria-label="Questions this rule would have answered">
          {shown.map((answer) => (
            <li key={answer.id} class={answer.differs ? 'differs' : undefined}>
              <code><VisibleText text={clip(answer.text)} /></code>
              <span class={answer.differs ? 'differs-text' : 'muted'}>{note(answer, draft.effect)} · {dateTime(answer.createdAt)}</span>
            </li>
          ))}
        </ul>
      )}
      {answered.length > shown.length && <p class="muted">and {answered.length - shown.length} more</p>}
    </section>
  );
}

/** The dry run over the history this browser keeps, read as the editor opens. */
export function RuleDryRun({ db, draft }: { db: ElicitlyDb; draft: RuleDraft }) {
  return <DryRunView rows={useQuestionHistory(db)} draft={draft} />;
}
