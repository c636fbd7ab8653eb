import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { revealHidden } from '../core/visible-text.js';
import type { RequestRow } from '../rows/rows.js';
import type { Decide, DecideReply } from '../messages.js';
import { isShortcut } from './keyboard.js';
import { RowMeta } from './row-meta.js';
import { useNow } from './use-now.js';
import { VisibleText } from './visible-text.js';

/**
 * Only a request approved as-is (json mode) can be decided without opening it: there is nothing to fill in or to
 * include, so approving several at once sends exactly what approving each one would. One that needs a passkey is
 * decided in its review, where the passkey signs that one decision.
 */
export function decidableInBatch(row: RequestRow): boolean {
  return row.request.kind === 'approval' && row.request.mode === 'json' && row.delivery === undefined && row.assurance !== 'passkey';
}

type Tally = { delivered: number; queued: number; refused: number };

function tally(replies: DecideReply[]): Tally {
  const out: Tally = { delivered: 0, queued: 0, refused: 0 };
  for (const reply of replies) {
    if (reply.state === 'answered' && reply.ok) out.delivered += 1;
    else if (reply.state === 'queued') out.queued += 1;
    else out.refused += 1;
  }
  return out;
}

function describeTally(verb: string, t: Tally): string {
  const parts = [`${t.delivered} ${verb}`];
  if (t.queued) parts.push(`${t.queued} waiting for the hub`);
  if (t.refused) parts.push(`${t.refused} not taken (already decided or withdrawn)`);
  return `${parts.join(', ')}.`;
}

/**
 * Several json-mode approvals decided together: one durable decision each, in the order shown. Each carries the hash of
 * the row the list shows it from (its request and template, as opening it would show them), so the hub refuses one
 * whose row is not the request it holds (`shown_mismatch`), like a decision made in the review.
 */
function BatchBar({ selected, decide, onDone }: { selected: RequestRow[]; decide: Decide; onDone(ids: string[], summary: string): void }) {
  const [busy, setBusy] = useState(false);
  const decideAll = async (decision: 'approved' | 'rejected') => {
    setBusy(true);
    // Loaded when a decision is made: the canonicalizer and SHA-256 stay out of the popup's first chunk.
    const { shownHash } = await import('../../shared/shown-hash.js');
    const replies: DecideReply[] = [];
    for (const row of selected) {
      try {
        replies.push(await decide({ elicitationId: row.elicitationId, decision, shownHash: await shownHash(row) }));
      } catch (e) {
        replies.push({ state: 'error', message: String(e) });
      }
    }
    setBusy(false);
    onDone(selected.map((row) => row.elicitationId), describeTally(decision === 'approved' ? 'approved' : 'rejected', tally(replies)));
  };
  return (
    <div class="batch" role="group" aria-label="Selected requests">
      <span>{selected.length} selected</span>
      <button type="button" disabled={busy} onClick={() => void decideAll('approved')}>Approve {selected.length}</button>
      <button type="button" disabled={busy} onClick={() => void decideAll('rejected')}>Reject {selected.length}</button>
    </div>
  );
}

/**
 * How a surface opens a request: a button handed the row shown (the extension's sections, which open the review with
 * it at once), or a link to the surface's own address for it (the phone's, so Back returns to the inbox).
 */
export type OpenRequest = { onOpen(id: string, row: RequestRow): void } | { href(id: string): string };

function Item({ row, now, open }: { row: RequestRow; now: number; open: OpenRequest }) {
  const body = (
    <>
      <span class="message"><VisibleText text={row.message} /></span>{' '}
      <span class="meta"><RowMeta row={row} now={now} show={['age', 'deadline']} /></span>
    </>
  );
  if ('href' in open) return <a class="inbox-item" data-id={row.elicitationId} href={open.href(row.elicitationId)}>{body}</a>;
  return <button type="button" class="inbox-item" data-id={row.elicitationId} onClick={() => open.onOpen(row.elicitationId, row)}>{body}</button>;
}

/**
 * The pending requests, for every surface: the rows it holds (the extension's database, the phone's memory), undefined
 * while they load. One whose deadline passed leaves by the clock. j/k move through the list, Enter opens; with
 * `decide`, json approvals can be selected (x) and decided together. `empty`: what the surface says when nothing waits.
 */
export function InboxList({ rows: held, decide, open, empty }: { rows: RequestRow[] | undefined; decide?: Decide; open: OpenRequest; empty: ComponentChildren }) {
  const now = useNow();
  const rows = held?.filter((row) => row.expiresAt > now);
  const list = useRef<HTMLUListElement>(null);
  const [selection, setSelection] = useState<ReadonlySet<string>>(new Set());
  const [summary, setSummary] = useState('');
  // A selected request that left the inbox (decided elsewhere, withdrawn, expired) is no longer selected.
  const selected = (rows ?? []).filter((r) => selection.has(r.elicitationId) && decidableInBatch(r));

  const toggle = (id: string) =>
    setSelection((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  // The latest rows are read through a ref, so the listener stays.
  const latest = useRef({ rows, toggle, open, decide });
  latest.current = { rows, toggle, open, decide };
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (!isShortcut(e) || !list.current) return;
      const items = Array.from(list.current.querySelectorAll<HTMLElement>('.inbox-item'));
      const at = items.findIndex((item) => item === document.activeElement);
      const id = at === -1 ? undefined : items[at]?.dataset.id;
      const row = id === undefined ? undefined : latest.current.rows?.find((r) => r.elicitationId === id);
      const { open } = latest.current;
      if (e.key === 'j' || e.key === 'k') {
        e.preventDefault();
        const to = e.key === 'j' ? Math.min(at + 1, items.length - 1) : Math.max(at - 1, 0);
        items[to]?.focus();
      } else if (e.key === 'Enter' && row && 'onOpen' in open) {
        // A link opens itself on Enter.
        e.preventDefault();
        open.onOpen(row.elicitationId, row);
      } else if (e.key === 'x' && row && latest.current.decide && decidableInBatch(row)) {
        e.preventDefault();
        latest.current.toggle(row.elicitationId);
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  if (rows === undefined) return <p class="muted">Loading…</p>;
  if (rows.length === 0) {
    return (
      <section class="empty">
        {empty}
        {summary && <p role="status">{summary}</p>}
      </section>
    );
  }
  return (
    <>
      {decide && selected.length > 0 && (
        <BatchBar
          selected={selected}
          decide={decide}
          onDone={(ids, text) => {
            setSelection((current) => new Set([...current].filter((id) => !ids.includes(id))));
            setSummary(text);
          }}
        />
      )}
      <p class="batch-summary" role="status">{summary}</p>
      <ul class="inbox" aria-label="Pending requests" ref={list}>
        {rows.map((row) => (
          <li key={row.elicitationId} class={selection.has(row.elicitationId) ? 'selected' : undefined}>
            {decide && decidableInBatch(row) && (
              <input
                type="checkbox"
                class="select"
                aria-label={`Select: ${revealHidden(row.message)}`}
                checked={selection.has(row.elicitationId)}
                onChange={() => toggle(row.elicitationId)}
              />
            )}
            <Item row={row} now={now} open={open} />
          </li>
        ))}
      </ul>
    </>
  );
}
