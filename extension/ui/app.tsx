import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ElicitlyDb } from '../db/database.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import type { ReviewerClient, Decision } from '../../kit/messages.js';
import { ConnectionHeader } from './connection-header.js';
import { isShortcut } from '../../kit/ui/keyboard.js';
import { Inbox, usePendingRequests } from './inbox.js';
import { lazyView, prefetchWhenIdle } from './lazy-view.js';
import { getRequest } from './page-reads.js';
import { useLiveQuery } from './use-live-query.js';
import { useNow } from '../../kit/ui/use-now.js';

// Only the shell, the header and the inbox load with the popup: each view is fetched (from the extension itself, in
// milliseconds) the first time it is opened, which keeps the popup's bundle within its budget.
const ReviewView = lazyView(() => import('../../kit/ui/review/review-view.js').then((m) => m.ReviewView));
const History = lazyView(() => import('./history.js').then((m) => m.History));
const HistoryDetail = lazyView(() => import('./history-detail.js').then((m) => m.HistoryDetailRoute));
const ShortcutsHelp = lazyView(() => import('./shortcuts-help.js').then((m) => m.ShortcutsHelp));
const RulesView = lazyView(() => import('./rules-view.js').then((m) => m.RulesView));
const SettingsView = lazyView(() => import('./settings-view.js').then((m) => m.SettingsView));
const Welcome = lazyView(() => import('./welcome.js').then((m) => m.Welcome));
// The dry run of a rule made in a review: with the shell parser it matches commands with, fetched when the person
// opens "Always allow…", never with the review itself.
const PermissionRuleEditor = lazyView(() => import('./permission-rule-editor.js').then((m) => m.PermissionRuleEditor));
const RuleDryRun = lazyView(() => import('./rule-dry-run.js').then((m) => m.RuleDryRun));

type Route =
  | { name: 'inbox' }
  | { name: 'review'; id: string }
  | { name: 'history' }
  | { name: 'history-detail'; id: string }
  | { name: 'rules' }
  | { name: 'settings' }
  | { name: 'welcome' };

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Unknown hashes land on the inbox rather than on an error page. */
function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  const [section, id] = parts;
  if (section === 'review' && id) return { name: 'review', id: decode(id) };
  if (section === 'history' && id) return { name: 'history-detail', id: decode(id) };
  if (section === 'history') return { name: 'history' };
  if (section === 'rules') return { name: 'rules' };
  if (section === 'settings') return { name: 'settings' };
  if (section === 'welcome') return { name: 'welcome' };
  return { name: 'inbox' };
}

const sameRoute = (a: Route, b: Route) => a.name === b.name && ('id' in a ? a.id : '') === ('id' in b ? b.id : '');

/** The app's route listener: go() tells it at once, as hashchange comes a task later (often after a frame). */
let onGo: (() => void) | undefined;

function go(hash: string): void {
  window.location.hash = hash;
  onGo?.();
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute((current) => {
      const next = parseRoute(window.location.hash);
      return sameRoute(current, next) ? current : next;
    });
    // The Navigation API (Chrome) tells of a new hash as it is set, a link's included; hashchange comes a task later.
    const navigation: unknown = Reflect.get(window, 'navigation');
    const entries = navigation instanceof EventTarget ? navigation : undefined;
    entries?.addEventListener('currententrychange', onChange);
    window.addEventListener('hashchange', onChange);
    onGo = onChange;
    onChange();
    return () => {
      entries?.removeEventListener('currententrychange', onChange);
      window.removeEventListener('hashchange', onChange);
      if (onGo === onChange) onGo = undefined;
    };
  }, []);
  return route;
}

/** A live row; null once read and absent, undefined while loading. */
function useRow(db: ElicitlyDb, id: string) {
  return useLiveQuery(async () => (await getRequest(db, id)) ?? null, [db, id]);
}

/** Its own component so the per-second clock re-renders the count only, not the open review. */
function InboxLink({ db, current }: { db: ElicitlyDb; current: boolean }) {
  const now = useNow();
  const pending = usePendingRequests(db, now);
  return (
    <a href="#/inbox" aria-current={current ? 'page' : undefined}>
      Inbox ({pending?.length ?? 0})
    </a>
  );
}

/** The extension's passkey ceremony, loaded when a request that needs one is decided. */
function signPasskeyWith(client: ReviewerClient) {
  const passkey = client.passkey;
  if (!passkey) return undefined;
  return async (row: RequestRow, decision: Decision) => (await import('../../kit/ui/passkey-ceremony.js')).signDecision({ passkey }, row, decision);
}

function ReviewRoute({ db, client, id, known, mode, openInTab }: {
  db: ElicitlyDb;
  client: ReviewerClient;
  id: string;
  /** The row as the inbox showed it, when the review was opened from there. */
  known: RequestRow | undefined;
  mode: 'popup' | 'tab';
  openInTab?: (hash: string) => void;
}) {
  // Shown at once when the inbox handed it over; read live either way.
  const row = useLiveQuery<RequestRow | null>(async () => (await getRequest(db, id)) ?? null, [db, id], { initial: known });
  if (row === undefined) return <p class="muted">Loading…</p>;
  if (row === null) return <p>Request not found.</p>;
  return (
    <>
      {mode === 'popup' && openInTab && (
        <div class="toolbar">
          <button type="button" onClick={() => openInTab(`#/review/${encodeURIComponent(id)}`)}>Open in a tab</button>
        </div>
      )}
      <ReviewView
        row={row}
        decide={client.decide}
        onShown={client.shown}
        signPasskey={signPasskeyWith(client)}
        {...(client.saveRule ? { ruleEditor: (slot) => <PermissionRuleEditor {...slot} dryRun={(draft) => <RuleDryRun db={db} draft={draft} />} /> } : {})}
        onDone={() => go('#/inbox')}
      />
    </>
  );
}

function HistoryDetailRoute({ db, id }: { db: ElicitlyDb; id: string }) {
  const row = useRow(db, id);
  return (
    <>
      <p><a href="#/history">Back to history</a></p>
      {row === undefined ? <p class="muted">Loading…</p> : row === null ? <p>Request not found.</p> : <HistoryDetail db={db} row={row} />}
    </>
  );
}

/**
 * The next request to look at: the first pending one in inbox order (newest first) that is not the one on screen and
 * has no decision of this browser's on its way.
 */
function nextPending(rows: RequestRow[] | undefined, current: string | undefined): string | undefined {
  return rows?.find((r) => r.elicitationId !== current && r.delivery === undefined)?.elicitationId;
}

/**
 * `?` shows the shortcuts; `n` opens the next pending request — from the inbox, or from a review already decided. Its
 * own component, so the per-second clock behind the pending list re-renders only this, not the open review.
 */
function AppKeys({ db, route }: { db: ElicitlyDb; route: Route }) {
  const [help, setHelp] = useState(false);
  const now = useNow();
  const pending = usePendingRequests(db, now);
  const current = route.name === 'review' ? route.id : undefined;
  const currentRow = useLiveQuery(async () => (current ? ((await getRequest(db, current)) ?? null) : null), [db, current]);
  const latest = useRef({ pending, route, currentRow });
  latest.current = { pending, route, currentRow };
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key === '?' && isShortcut(e)) {
        e.preventDefault();
        setHelp((open) => !open);
        return;
      }
      if (e.key !== 'n' || !isShortcut(e)) return;
      const { pending: rows, route: at, currentRow: row } = latest.current;
      // In a review, only once it is known to be decided (or its decision is on its way): `n` never skips an open question.
      // (The live query keeps the last route's row until it has read the new one: the id must match.)
      if (at.name === 'review' && !(row && row.elicitationId === at.id && (row.status !== 'pending' || row.delivery !== undefined))) return;
      if (at.name !== 'review' && at.name !== 'inbox') return;
      const next = nextPending(rows, at.name === 'review' ? at.id : undefined);
      if (next === undefined) return;
      e.preventDefault();
      go(`#/review/${encodeURIComponent(next)}`);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);
  const closeHelp = useCallback(() => setHelp(false), []);
  return help ? <ShortcutsHelp onClose={closeHelp} /> : null;
}

export function App({ db, client, mode, openInTab }: {
  db: ElicitlyDb;
  client: ReviewerClient;
  mode: 'popup' | 'tab';
  openInTab?: (hash: string) => void;
}) {
  const route = useRoute();
  // The row the inbox showed when one was opened: the review shows it at once, and its live query keeps it current.
  const opened = useRef<RequestRow | undefined>(undefined);
  useEffect(() => {
    if (route.name !== 'inbox') return undefined;
    // Back in the inbox, that row is history: a later review of the same request reads it afresh.
    opened.current = undefined;
    // From the inbox the next view is most likely a review, or the history the nav offers: their modules are fetched
    // while the person reads the list.
    return prefetchWhenIdle(ReviewView, History);
  }, [route.name]);
  const section = route.name === 'review' ? 'inbox' : route.name === 'history-detail' ? 'history' : route.name;
  return (
    <div class={`app mode-${mode}`}>
      <h1 class="visually-hidden">Elicitly Companion</h1>
      <ConnectionHeader db={db} />
      <nav aria-label="Sections">
        <InboxLink db={db} current={section === 'inbox'} />
        <a href="#/history" aria-current={section === 'history' ? 'page' : undefined}>History</a>
        <a href="#/rules" aria-current={section === 'rules' ? 'page' : undefined}>Rules</a>
        <a href="#/settings" aria-current={section === 'settings' ? 'page' : undefined}>Settings</a>
      </nav>
      <main>
        {route.name === 'inbox' && (
          <Inbox db={db} client={client} onOpen={(id, row) => {
            opened.current = row;
            go(`#/review/${encodeURIComponent(id)}`);
          }} />
        )}
        {route.name === 'review' && (
          <ReviewRoute
            key={route.id} db={db} client={client} id={route.id} mode={mode} openInTab={openInTab}
            known={opened.current?.elicitationId === route.id ? opened.current : undefined}
          />
        )}
        {route.name === 'history' && <History db={db} onOpen={(id) => go(`#/history/${encodeURIComponent(id)}`)} />}
        {route.name === 'history-detail' && <HistoryDetailRoute key={route.id} db={db} id={route.id} />}
        {route.name === 'rules' && <RulesView db={db} client={client} />}
        {route.name === 'settings' && <SettingsView db={db} client={client} />}
        {route.name === 'welcome' && <Welcome db={db} client={client} />}
      </main>
      <AppKeys db={db} route={route} />
      <p class="shortcuts-hint muted">Press <kbd>?</kbd> for keyboard shortcuts.</p>
    </div>
  );
}
