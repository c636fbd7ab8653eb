import { useCallback, useEffect, useState } from 'preact/hooks';
import { PAIRING_TTL_MINUTES } from '../shared/hub-auth.js';
import { useStore } from '../kit/ui/store.js';
import type { PairingReason, RequestRow, StoredRow } from '../kit/rows/rows.js';
import { decidedText, decisionSummary } from '../kit/ui/request-summary.js';
import { clip } from '../shared/field-issues.js';
import { ConnectionHeader, type ConnectionWords } from '../kit/ui/connection-header.js';
import { InboxList } from '../kit/ui/inbox-list.js';
import { RowMeta } from '../kit/ui/row-meta.js';
import { ReviewView } from '../kit/ui/review/review-view.js';
import { PasskeysForm } from '../kit/ui/passkeys-form.js';
import type { PushControl } from './push-control.js';
import { PushSettings } from './push-settings.js';
import { signDecision } from '../kit/ui/passkey-ceremony.js';
import type { Decision } from '../kit/messages.js';
import { useNow } from '../kit/ui/use-now.js';
import { VisibleText } from '../kit/ui/visible-text.js';
import type { PairingRefusal } from './device-connection.js';
import { checkDeviceName } from './device-name.js';
import type { PhoneSession } from './phone-session.js';
import { parseRoute, reviewHash, type Route } from './route.js';

const PAIR_COMMAND = <code>elicitly-companion remote pair</code>;

/** The page's own words in the kit's header: a phone pairs by the QR code and updates by reloading. */
const WORDS: ConnectionWords = {
  self: 'this page',
  noHub: () => <>the hub is not answering (is an agent running on the computer?).</>,
  pair: (reason) => <>{reason === 'key_unknown' ? 'No longer paired' : 'Not paired'}</>,
  untrusted: () => <>: whatever answers at this address could not prove it holds this phone's key, so nothing was sent to it.</>,
  update: () => <>Reload this page.</>,
};

const REFUSAL: Record<PairingRefusal, string> = {
  code_refused: 'The hub refused this pairing code.',
  no_code_active: `No pairing code is active on the hub: a code works once, for ${PAIRING_TTL_MINUTES} minutes.`,
  code_unproven:
    'Whatever answered at this address could not prove it holds this pairing code, so nothing else was sent to it: the code may have expired or been used, or what answered is not your hub.',
  code_replaced: 'A newer pairing code replaced this one (remote pair was run again after this QR code was made): scan the newest QR code.',
};

function PairHelp() {
  return <p>On the computer that runs your agents, run {PAIR_COMMAND} in a terminal and scan the QR code it prints with this phone.</p>;
}

/** No key on this phone (never paired here, or removed): how to pair. */
function NotPaired({ reason }: { reason: PairingReason | undefined }) {
  return (
    <section class="empty phone-not-paired">
      <p>{reason === 'key_unknown' ? 'This phone is no longer paired.' : 'This phone is not paired with your hub.'}</p>
      {reason === 'key_unknown' && <p class="muted">The hub no longer knows this phone's key (it was removed with <code>pair --remove</code>, or the hub's state was reset).</p>}
      {reason !== undefined && reason !== 'key_unknown' && <p role="alert" class="error">{REFUSAL[reason]}</p>}
      <PairHelp />
    </section>
  );
}

/** The pairing link's view: what to call this device, then Pair. The code itself is never shown. */
function Pairing({ session, code, serial, suggestedName, onDone }: { session: PhoneSession; code: string; serial: number | null; suggestedName: string; onDone(): void }) {
  const [name, setName] = useState(suggestedName);
  const [problem, setProblem] = useState<string | null>(null);
  const [sent, setSent] = useState(false);
  const refused = useStore(session.pairingRefused);
  const state = useStore(session.state);
  const paired = sent && refused === null && state?.state === 'connected';
  const busy = sent && refused === null && !paired;
  // Paired: the code is spent, and the inbox is what the person came for.
  useEffect(() => {
    if (paired) onDone();
  }, [paired, onDone]);
  const submit = (e: Event) => {
    e.preventDefault();
    const checked = checkDeviceName(name);
    if (!checked.ok) {
      setProblem(checked.message);
      return;
    }
    setProblem(null);
    setSent(true);
    session.pair(code, checked.name, serial);
  };
  return (
    <form class="pairing phone-pairing" onSubmit={submit} noValidate>
      <h2>Pair this device</h2>
      <p>It will receive the requests your agents file and can decide them. You can remove it at any time with <code>elicitly-companion pair --remove</code>.</p>
      <div class="field">
        <label for="device-name">Name this device</label>
        <input
          id="device-name"
          type="text"
          autoComplete="off"
          maxLength={60}
          value={name}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? 'device-name-problem' : undefined}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        {problem && <p id="device-name-problem" class="error">{problem}</p>}
      </div>
      {refused && (
        <>
          <p role="alert" class="error">{REFUSAL[refused]}</p>
          <PairHelp />
        </>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || refused !== null}>{busy ? 'Pairing…' : 'Pair'}</button>
        <button type="button" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

const REVIEW_LINK = { href: reviewHash };

/** The kit's inbox over the page's lists; a request decided here leaves it at once, before the hub's news of it. */
function Inbox({ rows, connected, flash, push }: { rows: RequestRow[]; connected: boolean; flash: string | null; push: PushControl | undefined }) {
  const open = rows.filter((r) => r.delivery !== 'delivered');
  const empty = connected
    ? <><p>Nothing to review.</p><p class="muted">Requests your agents file appear here.</p></>
    : <p>Nothing to show until the hub answers.</p>;
  return (
    <section aria-labelledby="inbox-title">
      <h2 id="inbox-title" class="visually-hidden">Pending requests</h2>
      <p class="phone-flash" role="status">{flash ?? ''}</p>
      <InboxList rows={open} open={REVIEW_LINK} empty={empty} />
      {push && <PushSettings push={push} connected={connected} />}
    </section>
  );
}

function History({ rows }: { rows: StoredRow[] }) {
  if (rows.length === 0) return <p class="empty muted">No request has ended yet.</p>;
  return (
    <ul class="phone-list" aria-label="Recent requests">
      {rows.map((row) => {
        // The page has no rules to name one by: a rule's decision is said in general words.
        const summary = decisionSummary(row, undefined, null);
        const where = row.decidedVia === 'rule' ? 'decided by one of your rules' : undefined;
        return (
          <li key={row.elicitationId}>
            <a class="phone-item" href={reviewHash(row.elicitationId)}>
              <span class="message"><VisibleText text={row.message} /></span>
              <span class="meta">
                <strong class={`verdict verdict-${summary.verdict}`}><VisibleText text={summary.label} /></strong>
                {[where, summary.note].filter(Boolean).map((text) => ` · ${text}`).join('')}
              </span>
              <span class="meta"><RowMeta row={row} show={['ended']} /></span>
            </a>
          </li>
        );
      })}
    </ul>
  );
}

function Review({ session, id, welcomed, onDone }: { session: PhoneSession; id: string; welcomed: boolean; onDone(): void }) {
  const lists = useStore(session.lists);
  const passkey = session.client.passkey;
  // This page's own WebAuthn ceremony, on an origin that can hold one (elicitly.localhost, or the tailnet's https name).
  const signPasskey = passkey ? (r: RequestRow, decision: Decision) => signDecision({ passkey }, r, decision) : undefined;
  const row = lists.pending.find((r) => r.elicitationId === id) ?? lists.recent.find((r) => r.elicitationId === id);
  if (!row) {
    if (!welcomed) return <p class="muted">Waiting for the hub…</p>;
    return <p class="muted">This request is not on the hub any more (it ended a while ago, or the link is wrong).</p>;
  }
  return (
    <>
      <RequestMeta row={row} />
      <ReviewView row={row} decide={session.client.decide} onShown={session.client.shown} signPasskey={signPasskey} onDone={onDone} here={null} />
    </>
  );
}

/** Which agent asks, what kind of request, and how long it has: above the review, which does not say them. */
function RequestMeta({ row }: { row: RequestRow }) {
  const now = useNow();
  return (
    <p class="phone-meta muted"><RowMeta row={row} now={now} show={['deadline']} /></p>
  );
}

/**
 * The inbox's confirmation of what the person just decided, naming it: "Approved: Revert commit 9fceb02…". The row
 * carries this page's own decision by then (`recordOutcome`).
 */
function decidedFlash(session: PhoneSession, id: string): string {
  const { pending, recent } = session.lists.get();
  const row = pending.find((r) => r.elicitationId === id) ?? recent.find((r) => r.elicitationId === id);
  if (!row?.outcome) return 'Decision sent.';
  return `${decidedText(row.request, row.outcome)}: ${clip(row.message, 80)}`;
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function Nav({ route, pendingCount }: { route: Route; pendingCount: number }) {
  return (
    <nav class="phone-nav" aria-label="Views">
      <a href="#/" aria-current={route.view === 'inbox' ? 'page' : undefined}>Inbox{pendingCount > 0 ? ` (${pendingCount})` : ''}</a>
      <a href="#/history" aria-current={route.view === 'history' ? 'page' : undefined}>History</a>
      <a href="#/passkeys" aria-current={route.view === 'passkeys' ? 'page' : undefined}>Passkeys</a>
    </nav>
  );
}

/**
 * The phone reviewer: a connection header, then pairing (from the QR's link), how to pair, or the inbox, a review
 * (the extension's own components, so what is decided is what is sent) and the recent history. `pairCode`: the code the
 * page was opened with, already taken out of its address.
 */
export function PhoneApp({ session, pairCode, pairSerial = null, suggestedName, push }: {
  session: PhoneSession;
  pairCode: string | null;
  /** The code's serial from the QR link: a code a newer one replaced is told apart from an impostor. */
  pairSerial?: number | null;
  suggestedName: string;
  push?: PushControl;
}) {
  const state = useStore(session.state);
  const lists = useStore(session.lists);
  const route = useRoute();
  const [code, setCode] = useState(pairCode);
  const [flash, setFlash] = useState<string | null>(null);
  const connected = state?.state === 'connected';
  const dropCode = useCallback(() => setCode(null), []);
  useEffect(() => {
    if (route.view !== 'inbox') setFlash(null);
  }, [route]);

  let body;
  if (code !== null) {
    body = <Pairing session={session} code={code} serial={pairSerial} suggestedName={suggestedName} onDone={dropCode} />;
  } else if (state?.state === 'pairing_needed') {
    body = <NotPaired reason={state.reason} />;
  } else if (route.view === 'review') {
    body = (
      <Review
        session={session}
        id={route.id}
        welcomed={connected || lists.pending.length + lists.recent.length > 0}
        onDone={() => {
          setFlash(decidedFlash(session, route.id));
          location.hash = '#/';
        }}
      />
    );
  } else if (route.view === 'history') {
    body = <History rows={lists.recent} />;
  } else if (route.view === 'passkeys') {
    body = <PasskeysForm client={session.client} connected={state === null ? undefined : connected} />;
  } else {
    body = <Inbox rows={lists.pending} connected={connected} flash={flash} push={push} />;
  }
  const showNav = code === null && state?.state !== 'pairing_needed';
  return (
    <div class="phone">
      <header class="phone-header">
        <h1>Elicitly</h1>
        <ConnectionHeader connection={state} words={WORDS} />
        {showNav && <Nav route={route} pendingCount={lists.pending.filter((r) => r.delivery !== 'delivered').length} />}
      </header>
      <main class="phone-main">{body}</main>
    </div>
  );
}
