import type { RequestRow } from '../rows/rows.js';
import { age, dateTime, timeLeft } from './format-time.js';
import { KIND_LABEL } from './labels.js';
import { VisibleText } from './visible-text.js';

/**
 * A request's line under its message, the same on every surface that lists requests (the extension's inbox, the phone's
 * inbox, history and review): its kind, the agent (its own words, hidden characters shown), and, as asked, how old it
 * is, how long it has, or when it ended.
 */
export function RowMeta({ row, now = Date.now(), show }: { row: RequestRow; now?: number; show: readonly ('age' | 'deadline' | 'ended')[] }) {
  const parts = [
    <span key="kind" class={`kind kind-${row.kind}`}>{KIND_LABEL[row.kind]}</span>,
    <span key="agent" class="agent"><VisibleText text={row.agent} /></span>,
    ...(show.includes('age') ? [<span key="age">{age(row.createdAt, now)}</span>] : []),
    ...(show.includes('deadline') && row.status === 'pending' ? [<span key="deadline" class="deadline">{timeLeft(row.expiresAt, now)}</span>] : []),
    ...(show.includes('ended') && row.decidedAt !== undefined ? [<span key="ended">{dateTime(row.decidedAt)}</span>] : []),
  ];
  return <>{parts.flatMap((part, i) => (i === 0 ? [part] : [' · ', part]))}</>;
}
