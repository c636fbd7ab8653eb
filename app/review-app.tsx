import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AppErrorSchema, AppViewResultSchema, type AppViewResult } from '../shared/app-surface.js';
import { rowFromView, type RequestRow } from '../kit/rows/rows.js';
import type { ReviewerClient } from '../kit/messages.js';
import { dateTime } from '../kit/ui/format-time.js';
import { RequestDetail } from '../kit/ui/review/request-detail.js';
import { ReviewView } from '../kit/ui/review/review-view.js';
import { VisibleText } from '../kit/ui/visible-text.js';
import { createAppClient, resultText, type CallToolResult, type Decided, type Ended } from './app-client.js';
import type { HostConnection } from './host-connection.js';
import { fullscreenToggle } from './host-context.js';
import type { HostContext } from './host-messages.js';
import { Store, useStore } from '../kit/ui/store.js';
import { targetOf, viewErrorText, type Said } from './tool-answer.js';

/** What the view needs of the host connection: a `HostConnection`, or a fake in tests. */
export type AppHost = Pick<HostConnection, 'callServerTool' | 'requestDisplayMode'>;

/** What the host has handed the view so far. */
export type Incoming =
  | { state: 'waiting' }
  | { state: 'result'; result: CallToolResult }
  | { state: 'cancelled'; reason?: string | undefined }
  | { state: 'failed'; message: string };

/** The tool's arguments as the host passed them; unchecked here (the answer's words check them against the tool's schema). */
export type ToolInput = Record<string, unknown> | undefined;

const NO_INPUT = new Store<ToolInput>(undefined);

export const NO_KEY_NOTE = 'Decide this in the Elicitly browser extension: this chat did not pass the review\'s key.';

/** `retry`: the read may work again (the host or the server did not answer); not for a request the chat may not show. */
type Loaded = { state: 'loading' } | { state: 'failed'; message: string; retry: boolean } | { state: 'ready'; row: RequestRow; decided: Decided | null };

async function readView(app: AppHost, elicitationId: string): Promise<Exclude<Loaded, { state: 'loading' }>> {
  let result: CallToolResult;
  try {
    result = await app.callServerTool({ name: 'elicit_app_view', arguments: { elicitationId } });
  } catch (err) {
    return { state: 'failed', message: `The chat did not pass the request on (${err instanceof Error ? err.message : String(err)}).`, retry: true };
  }
  if (result.isError) {
    const refusal = AppErrorSchema.safeParse(result.structuredContent);
    if (refusal.success) return { state: 'failed', message: viewErrorText(refusal.data), retry: refusal.data.error.code === 'unavailable' };
    return { state: 'failed', message: resultText(result) || 'The request could not be read.', retry: true };
  }
  const parsed = AppViewResultSchema.safeParse(result.structuredContent);
  if (!parsed.success) return { state: 'failed', message: 'The server\'s view of the request could not be read.', retry: true };
  // Who decided is said above the review in the app's own words ("Decided here at …"), not in the extension's note.
  const { decidedVia: _decidedVia, ...row } = rowFromView(parsed.data.view);
  return { state: 'ready', row, decided: parsed.data.decided };
}

let timeFormat: Intl.DateTimeFormat | undefined;

/** "14:03" today, the full date and time on another day. */
export function decidedTime(at: number, now = Date.now()): string {
  if (new Date(at).toDateString() !== new Date(now).toDateString()) return dateTime(at);
  timeFormat ??= new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
  return timeFormat.format(at);
}

/**
 * Who decided and when; after a decision of this review refused because the other surface was first, says so.
 * `elsewhere`: this view is not the review that could decide (it shows what `elicit_app_view` returned), so not "here".
 */
function DecidedNote({ decided, ended, elsewhere = false }: { decided: Decided; ended: Ended | null; elsewhere?: boolean }) {
  const when = decidedTime(decided.at);
  const notUsed = ended && !ended.decidedHere ? ' Your decision here was not used.' : '';
  const text = decided.via === 'app'
    ? `Decided ${elsewhere ? 'in the chat' : 'here'} at ${when}.`
    : decided.via === 'rule'
      ? `Decided by one of your rules at ${when}.${notUsed}`
      : decided.via === 'phone'
        ? `Decided on a paired phone at ${when}.${notUsed}`
        : `Decided in the browser extension at ${when}.${notUsed}`;
  return <p class="decided-note" role="status">{text}</p>;
}

/** A review that can still decide nothing: every decision is refused with the reason (never sent). */
const READ_ONLY: ReviewerClient = {
  decide: () => Promise.resolve({ state: 'error', message: NO_KEY_NOTE }),
  reconnect: () => Promise.resolve(),
};

/** Re-reads a pending request at most this often when the view gets focus (the other surface may have decided). */
const FOCUS_REFRESH_MS = 5000;

function Review({ app, elicitationId, token, context }: { app: AppHost; elicitationId: string; token: string | null; context: HostContext | undefined }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [ended, setEnded] = useState<Ended | null>(null);
  const lastRead = useRef(0);

  const refresh = useCallback(async () => {
    lastRead.current = Date.now();
    const next = await readView(app, elicitationId);
    // A failed re-read keeps what is shown: only the first read's failure replaces the review.
    setLoaded((prev) => (next.state === 'failed' && prev.state === 'ready' ? prev : next));
  }, [app, elicitationId]);

  useEffect(() => {
    setLoaded({ state: 'loading' });
    setEnded(null);
    void refresh();
  }, [refresh]);

  const client = useMemo(() => (token === null ? READ_ONLY : createAppClient(app, token, {
    refresh,
    onEnded: (e) => {
      setEnded(e);
      void refresh();
    },
  })), [app, token, refresh]);

  const row = loaded.state === 'ready' ? loaded.row : null;
  const pending = row?.status === 'pending';

  // While pending: read again when the person comes back to the view, and once its deadline has passed.
  useEffect(() => {
    if (!pending || !row) return;
    const onFocus = () => {
      if (Date.now() - lastRead.current >= FOCUS_REFRESH_MS) void refresh();
    };
    window.addEventListener('focus', onFocus);
    const untilExpiry = row.expiresAt - Date.now() + 1000;
    const timer = untilExpiry > 0 && untilExpiry < 2 ** 31 ? setTimeout(() => void refresh(), untilExpiry) : undefined;
    return () => {
      window.removeEventListener('focus', onFocus);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [pending, row, refresh]);

  if (loaded.state === 'loading') return <p class="muted">Loading the request…</p>;
  if (loaded.state === 'failed') {
    return (
      <>
        <p role="alert" class="error"><VisibleText text={loaded.message} /></p>
        {loaded.retry && <p><button type="button" onClick={() => void refresh()}>Try again</button></p>}
      </>
    );
  }
  const decided = loaded.decided ?? ended?.decided ?? null;
  const readOnly = token === null && loaded.row.status === 'pending';
  return (
    <>
      <FullscreenToggle app={app} context={context} pending={loaded.row.status === 'pending'} />
      {decided && <DecidedNote decided={decided} ended={ended} />}
      {readOnly && <p class="muted note" role="note">{NO_KEY_NOTE}</p>}
      {readOnly ? <RequestDetail row={loaded.row} /> : <ReviewView row={loaded.row} decide={client.decide} />}
    </>
  );
}

function FullscreenToggle({ app, context, pending }: { app: AppHost; context: HostContext | undefined; pending: boolean }) {
  const mode = fullscreenToggle(context, pending);
  if (mode === null) return null;
  return (
    <div class="toolbar">
      <button type="button" onClick={() => void app.requestDisplayMode({ mode }).catch(() => undefined)}>
        {mode === 'inline' ? 'Exit full screen' : 'Full screen'}
      </button>
    </div>
  );
}

/** `elicit_app_view`'s result rendered as the view (a host that lets a person call it): the request, read-only. */
function RequestShown({ result }: { result: AppViewResult }) {
  const { decidedVia: _decidedVia, ...row } = rowFromView(result.view);
  return (
    <>
      {result.decided && <DecidedNote decided={result.decided} ended={null} elsewhere />}
      {row.status === 'pending' && <p class="muted note" role="note">{NO_KEY_NOTE}</p>}
      <RequestDetail row={row} />
    </>
  );
}

/** A result in sentences: what was asked, the answer (a form's as a list), notes, and an unknown result only on request. */
function SaidView({ said }: { said: Said }) {
  return (
    <>
      {said.asked && <h2 class="review-message"><VisibleText text={said.asked} /></h2>}
      {said.tone === 'error'
        ? <p role="alert" class="error answer"><VisibleText text={said.text} /></p>
        : <p class="answer"><VisibleText text={said.text} /></p>}
      {said.fields && (
        <dl aria-label="Answer">
          {said.fields.map((f, i) => [<dt key={`t-${i}`}><VisibleText text={f.name} /></dt>, <dd key={`d-${i}`}><VisibleText text={f.value} /></dd>])}
        </dl>
      )}
      {said.notes?.map((note, i) => <p key={i} class="muted note"><VisibleText text={note} /></p>)}
      {said.returned !== undefined && (
        <details>
          <summary>Show what the tool returned</summary>
          <p class="answer"><VisibleText text={said.returned} /></p>
        </details>
      )}
    </>
  );
}

/**
 * The review inside the chat: the tool result the host handed over names the request (and carries its single-use key);
 * the request is read through `elicit_app_view` and shown with the extension's own review components, whose decisions
 * go to `elicit_app_decide` through the adapter. Any other result (an ask the host answered in its own dialog, an
 * app-only tool's own result, a refusal) is said in words (`targetOf`, tool-answer.ts), never shown as its JSON.
 */
export function ReviewApp({ app, incoming, input, context }: {
  app: AppHost;
  incoming: Store<Incoming>;
  /** The tool's arguments, as the host passed them (`toolinput`): the agent's own words for the answer. */
  input?: Store<ToolInput>;
  context: Store<HostContext | undefined>;
}) {
  const now = useStore(incoming);
  const args = useStore(input ?? NO_INPUT);
  const ctx = useStore(context);
  const target = useMemo(() => (now.state === 'result' ? targetOf(now.result, args) : null), [now, args]);
  let body;
  if (now.state === 'waiting') body = <p class="muted">Waiting for the request…</p>;
  else if (now.state === 'failed') body = <p role="alert" class="error"><VisibleText text={now.message} /></p>;
  else if (now.state === 'cancelled') body = <p class="muted">The tool call was canceled{now.reason ? `: ${now.reason}` : ''}. There is nothing to decide.</p>;
  else if (target?.kind === 'said') body = <SaidView said={target.said} />;
  else if (target?.kind === 'request') body = <RequestShown result={target.result} />;
  else if (target?.kind === 'review') {
    body = <Review key={target.elicitationId} app={app} elicitationId={target.elicitationId} token={target.token} context={ctx} />;
  }
  return (
    <main class="elicitly-app">
      {/* The page's title for assistive technology; the request's own words are the visible heading below it. */}
      <h1 class="visually-hidden">Elicitly review</h1>
      {body}
    </main>
  );
}
