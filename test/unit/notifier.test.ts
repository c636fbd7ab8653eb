// The notifier with a fake clock, a fake engine and a fake fetch: what is sent, when, to whom, and never what.
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import type { RemoteConfig } from '../../server/remote-config.js';
import { ntfyPublish, reviewUrl } from '../../server/remote/notification.js';
import { agentName } from '../../shared/push-notice.js';
import { MAX_QUEUED, startNotifier } from '../../server/remote/notifier.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { RequestViewSchema } from '../../shared/review-request.js';

const { logSpy } = vi.hoisted(() => ({ logSpy: vi.fn() }));
vi.mock('../../server/log.js', () => ({ log: logSpy }));

const MARKER = 'SECRET-MARKER-5e1d';
const MIN = 60_000;
const SECRET = 'ab'.repeat(32);
const START = 1_800_000_000_000;

type Listener = Parameters<ApprovalEngine['onEvent']>[0];
type EngineEvent = Parameters<Listener>[0];

class FakeClock {
  t = START;
  private timers: { at: number; run: () => void }[] = [];
  now = () => this.t;
  schedule = (run: () => void, ms: number) => {
    const timer = { at: this.t + ms, run };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  };
  get scheduled() {
    return this.timers.length;
  }
  /** Moves time on, running each timer due on the way at its own moment. */
  advance(ms: number) {
    const end = this.t + ms;
    for (let i = 0; i < 10_000; i++) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.t = next.at;
      next.run();
    }
    this.t = end;
  }
}

class FakeEngine {
  pending: RequestView[] = [];
  /** Whether this hub runs the timers (several hubs on one database: one of them). */
  leading = true;
  leads() {
    return this.leading;
  }
  private listeners = new Set<Listener>();
  onEvent(listener: Listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  pendingViews() {
    return this.pending;
  }
  emit(event: EngineEvent) {
    for (const listener of this.listeners) listener(event);
  }
  get listening() {
    return this.listeners.size;
  }
}

interface Sent {
  url: string;
  redirect: RequestRedirect | undefined;
  headers: Record<string, string>;
  body: string;
  at: number;
}

let clock: FakeClock;
let engine: FakeEngine;
let settings: RemoteConfig;
let sent: Sent[];
let respond: (sent: Sent, signal: AbortSignal) => Promise<Response>;
let stop: (() => void) | undefined;
let unreadable: Error | undefined;

function view(id: string, over: Partial<RequestView> = {}): RequestView {
  const message = `Deploy ${MARKER} to production`;
  return RequestViewSchema.parse({
    elicitationId: id,
    kind: 'approval',
    status: 'pending',
    message,
    createdAt: clock.t,
    expiresAt: clock.t + 60 * MIN,
    requester: { client: 'Claude Code', pid: 4242 },
    request: { kind: 'approval', mode: 'json', message, context: { note: MARKER, nested: [MARKER] }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Decline' }, timeoutSeconds: 3600 },
    renderedTemplate: `<b>${MARKER}</b>`,
    ...over,
  });
}

function start() {
  stop = startNotifier({
    engine,
    settings: () => {
      if (unreadable) throw unreadable;
      return settings;
    },
    port: 4777,
    now: clock.now,
    schedule: clock.schedule,
    fetch: (url, init) => {
      const entry: Sent = { url, redirect: init.redirect, headers: { ...(init.headers as Record<string, string>) }, body: String(init.body), at: clock.t };
      sent.push(entry);
      return respond(entry, init.signal ?? new AbortController().signal);
    },
  });
}

const created = (request: RequestView) => engine.emit({ method: 'request.created', params: { request } });
const removed = (id: string, status: 'approved' | 'canceled' | 'expired' = 'approved') => engine.emit({ method: 'request.removed', params: { elicitationId: id, status } });
const ntfy = () => sent.filter((s) => s.url === 'https://ntfy.example/');
const hooks = () => sent.filter((s) => s.url === 'https://hooks.example/in');
const titles = () => ntfy().map((s) => (JSON.parse(s.body) as { title: string }).title);
/** Lets the sends' promise chains settle (each is a few microtasks); bounded. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
const logged = (message: string) => logSpy.mock.calls.filter((call) => call[1] === message);

beforeEach(() => {
  clock = new FakeClock();
  engine = new FakeEngine();
  sent = [];
  respond = async () => new Response('{}', { status: 200 });
  settings = {
    version: 1,
    enabled: true,
    origins: ['https://desk.tail1234.ts.net'],
    ntfy: { url: 'https://ntfy.example/elicitly_topic_9x', token: 'tk_abc123' },
    webhook: { url: 'https://hooks.example/in', secret: SECRET },
    remindMinutes: 10,
    beforeExpiryMinutes: 5,
  };
  unreadable = undefined;
  logSpy.mockClear();
});

afterEach(() => {
  stop?.();
  stop = undefined;
});

describe('the first notification', () => {
  it('goes out only from the hub that runs the timers: every hub of a shared database hears of the request, one tells the person', async () => {
    engine.leading = false;
    start();
    created(view('el_elsewhere'));
    clock.advance(60 * MIN);
    await settle();
    expect(sent).toHaveLength(0);
    engine.leading = true;
    created(view('el_here'));
    expect(ntfy()).toHaveLength(1);
    expect(hooks()).toHaveLength(1);
  });

  it('goes out at once to ntfy (JSON publish) and the webhook, with the agent, the link and nothing of the request', async () => {
    start();
    created(view('el_first'));
    expect(ntfy()).toHaveLength(1);
    expect(hooks()).toHaveLength(1);
    const [post] = ntfy();
    // A redirect would re-post the body elsewhere: it fails the send instead.
    expect(sent.map((s) => s.redirect)).toEqual(['error', 'error']);
    expect(post?.headers).toEqual({ 'Content-Type': 'application/json', Authorization: 'Bearer tk_abc123' });
    expect(JSON.parse(post?.body ?? '')).toEqual({
      topic: 'elicitly_topic_9x',
      title: 'Approval waiting from Claude Code',
      message: 'Open the review to see it.',
      click: 'https://desk.tail1234.ts.net/phone/#/r/el_first',
      tags: ['approval'],
      priority: 4,
    });
    expect(JSON.parse(hooks()[0]?.body ?? '')).toEqual({
      type: 'request.waiting',
      elicitationId: 'el_first',
      agent: 'Claude Code',
      kind: 'approval',
      url: 'https://desk.tail1234.ts.net/phone/#/r/el_first',
      createdAt: new Date(START).toISOString(),
      expiresAt: new Date(START + 60 * MIN).toISOString(),
      sentAt: new Date(START).toISOString(),
    });
    await settle();
    expect(logSpy).not.toHaveBeenCalled();
  });

  it('carries no request content in any URL, header or body, through every notification and a decided twin', async () => {
    start();
    created(view('el_content'));
    clock.advance(30 * MIN);
    await settle();
    clock.advance(31 * MIN);
    await settle();
    created(view('el_ruled', { status: 'approved', outcome: { decision: 'approved', decidedVia: 'rule', ruleId: 'rule_1', action: 'submit', values: { secret: MARKER } } }));
    expect(sent.map((s) => (JSON.parse(s.body) as { type?: string; title?: string }).type ?? (JSON.parse(s.body) as { title: string }).title)).toEqual([
      'Approval waiting from Claude Code',
      'request.waiting',
      'Still waiting: approval from Claude Code',
      'request.reminder',
      'Expires in 5 min: approval from Claude Code',
      'request.expiring',
    ]);
    expect(JSON.stringify(sent)).not.toContain(MARKER);
    expect(JSON.stringify(sent)).not.toContain('Deploy');
  });

  it('is signed: the receiver recomputes HMAC-SHA256(secret, "<timestamp>.<body>")', () => {
    clock.t = START + 1234;
    start();
    created(view('el_signed'));
    const [hook] = hooks();
    const timestamp = hook?.headers['X-Elicitly-Timestamp'] ?? '';
    expect(timestamp).toBe(String(Math.floor((START + 1234) / 1000)));
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${hook?.body}`).digest('hex')}`;
    expect(hook?.headers['X-Elicitly-Signature']).toBe(expected);
    const forged = createHmac('sha256', SECRET).update(`${timestamp}.${hook?.body.replace('el_signed', 'el_other')}`).digest('hex');
    expect(hook?.headers['X-Elicitly-Signature']).not.toBe(`sha256=${forged}`);
  });

  it('falls back to loopback on the hub’s port for the link, and to "an agent" for a nameless client', () => {
    settings = { ...settings, origins: [], webhook: undefined };
    start();
    created(view('el_loop', { requester: { client: null, pid: 1 } }));
    expect(JSON.parse(ntfy()[0]?.body ?? '')).toMatchObject({ title: 'Approval waiting from an agent', click: 'http://127.0.0.1:4777/phone/#/r/el_loop' });
  });

  it('is not sent for a request a rule decided at creation, nor while the page is disabled, nor with nothing configured', () => {
    start();
    created(view('el_rule', { status: 'approved', outcome: { decision: 'approved', decidedVia: 'rule', ruleId: 'rule_1', action: 'submit', values: {} } }));
    settings = { ...settings, enabled: false };
    created(view('el_off'));
    settings = { ...settings, enabled: true, ntfy: undefined, webhook: undefined };
    created(view('el_none'));
    clock.advance(2 * 60 * MIN);
    expect(sent).toEqual([]);
    expect(clock.scheduled).toBe(0);
  });
});

describe('reminders', () => {
  it('one after remindMinutes, one beforeExpiryMinutes before expiry, each at its moment', () => {
    settings = { ...settings, webhook: undefined };
    start();
    created(view('el_r'));
    clock.advance(10 * MIN - 1);
    expect(titles()).toEqual(['Approval waiting from Claude Code']);
    clock.advance(1);
    expect(titles()).toEqual(['Approval waiting from Claude Code', 'Still waiting: approval from Claude Code']);
    expect(ntfy()[1]?.at).toBe(START + 10 * MIN);
    expect(JSON.parse(ntfy()[1]?.body ?? '')).toMatchObject({ priority: 3 });
    clock.advance(45 * MIN);
    expect(titles()[2]).toBe('Expires in 5 min: approval from Claude Code');
    expect(ntfy()[2]?.at).toBe(START + 55 * MIN);
    clock.advance(10 * MIN);
    expect(ntfy()).toHaveLength(3);
  });

  it('none after a decision, a withdrawal or an expiry: their timers are cleared', async () => {
    start();
    created(view('el_a'));
    created(view('el_b'));
    created(view('el_c'));
    await settle();
    removed('el_a', 'approved');
    removed('el_b', 'canceled');
    removed('el_c', 'expired');
    expect(clock.scheduled).toBe(0);
    clock.advance(2 * 60 * MIN);
    expect(sent).toHaveLength(6);
  });

  it('the before-expiry one only when its moment comes after the reminder; remindMinutes 0 sends none', () => {
    settings = { ...settings, webhook: undefined };
    start();
    // Reminder at 10 min, expiry warning would be at 7 min: only the reminder.
    created(view('el_short', { expiresAt: clock.t + 12 * MIN }));
    clock.advance(13 * MIN);
    expect(titles()).toEqual(['Approval waiting from Claude Code', 'Still waiting: approval from Claude Code']);
    sent = [];
    settings = { ...settings, remindMinutes: 0 };
    created(view('el_noremind', { expiresAt: clock.t + 12 * MIN }));
    clock.advance(13 * MIN);
    expect(titles()).toEqual(['Approval waiting from Claude Code', 'Expires in 5 min: approval from Claude Code']);
  });

  it('a reminder past the expiry is skipped, the warning before it still comes', () => {
    settings = { ...settings, webhook: undefined, remindMinutes: 30 };
    start();
    created(view('el_late', { expiresAt: clock.t + 20 * MIN }));
    clock.advance(21 * MIN);
    expect(titles()).toEqual(['Approval waiting from Claude Code', 'Expires in 5 min: approval from Claude Code']);
  });

  it('reads the settings when it sends: a destination removed or the page disabled meanwhile gets nothing', () => {
    start();
    created(view('el_s'));
    settings = { ...settings, ntfy: undefined };
    clock.advance(10 * MIN);
    expect(sent.map((s) => s.url)).toEqual(['https://ntfy.example/', 'https://hooks.example/in', 'https://hooks.example/in']);
    settings = { ...settings, enabled: false };
    clock.advance(50 * MIN);
    expect(sent).toHaveLength(3);
  });

  it('after a takeover: reminders for the requests already waiting, from their creation, without a first notification', () => {
    settings = { ...settings, webhook: undefined };
    engine.pending = [view('el_old', { createdAt: START - 8 * MIN, expiresAt: START + 52 * MIN }), view('el_older', { createdAt: START - 12 * MIN, expiresAt: START + 48 * MIN })];
    start();
    expect(sent).toEqual([]);
    clock.advance(2 * MIN);
    // el_old's reminder (created + 10 min); el_older's came due before this hub started and is not sent twice.
    expect(titles()).toEqual(['Still waiting: approval from Claude Code']);
    expect(JSON.parse(ntfy()[0]?.body ?? '')).toMatchObject({ click: 'https://desk.tail1234.ts.net/phone/#/r/el_old' });
    clock.advance(41 * MIN);
    expect(ntfy().map((s) => (JSON.parse(s.body) as { click: string }).click.split('/').pop())).toEqual(['el_old', 'el_older']);
    clock.advance(4 * MIN);
    expect(ntfy().map((s) => (JSON.parse(s.body) as { click: string }).click.split('/').pop())).toEqual(['el_old', 'el_older', 'el_old']);
  });

  it('stop clears every timer, unsubscribes and aborts what is in flight without logging it', async () => {
    respond = (_s, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    start();
    created(view('el_stop'));
    expect(sent).toHaveLength(2);
    stop?.();
    stop = undefined;
    expect(engine.listening).toBe(0);
    expect(clock.scheduled).toBe(0);
    created(view('el_after'));
    clock.advance(2 * 60 * MIN);
    await settle();
    expect(sent).toHaveLength(2);
    expect(logSpy).not.toHaveBeenCalled();
  });
});

describe('failures and floods', () => {
  it('a refused or failed send is logged with its status, never thrown and never retried; the topic and token stay out of the log', async () => {
    let n = 0;
    respond = async () => {
      n++;
      if (n === 1) return new Response('no', { status: 500 });
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    };
    start();
    expect(() => created(view('el_fail'))).not.toThrow();
    await settle();
    expect(sent).toHaveLength(2);
    expect(logged('a notification was refused')).toEqual([['warn', 'a notification was refused', { to: 'ntfy', host: 'ntfy.example', type: 'request.waiting', status: 500 }]]);
    expect(logged('a notification could not be sent')).toEqual([
      ['warn', 'a notification could not be sent', { to: 'webhook', host: 'hooks.example', type: 'request.waiting', error: 'Error: connect ECONNREFUSED 127.0.0.1:9' }],
    ]);
    expect(JSON.stringify(logSpy.mock.calls)).not.toMatch(/elicitly_topic_9x|tk_abc123/);
    clock.advance(MIN);
    await settle();
    expect(sent).toHaveLength(2);
  });

  it('settings that cannot be read (a planted symlink, say) are logged and send nothing; the engine never sees the error', () => {
    start();
    unreadable = new Error('remote.json is a symbolic link; refusing it');
    expect(() => created(view('el_unreadable'))).not.toThrow();
    expect(sent).toEqual([]);
    expect(logSpy).toHaveBeenCalledWith('warn', 'could not read the notification settings (remote.json): nothing sent', { error: 'Error: remote.json is a symbolic link; refusing it' });
  });

  it('each send is bounded by a timeout signal', async () => {
    const signals: AbortSignal[] = [];
    settings = { ...settings, webhook: undefined };
    stop = startNotifier({
      engine,
      settings: () => settings,
      port: 1,
      now: clock.now,
      schedule: clock.schedule,
      sendTimeoutMs: 20,
      fetch: (_url, init) => {
        if (init.signal) signals.push(init.signal);
        return new Promise(() => undefined);
      },
    });
    created(view('el_t'));
    expect(signals).toHaveLength(1);
    await vi.waitFor(() => expect(signals[0]?.aborted).toBe(true), { timeout: 2000, interval: 10 });
    expect((signals[0]?.reason as Error).name).toBe('TimeoutError');
  });

  it('a flood: 4 sockets at most, a queue capped at MAX_QUEUED (the rest dropped and logged once), one send per request and kind, none for a request that ended while queued', async () => {
    settings = { ...settings, webhook: undefined };
    const release: (() => void)[] = [];
    respond = () => new Promise((resolve) => release.push(() => resolve(new Response('{}'))));
    start();
    for (let i = 0; i < 200; i++) created(view(`el_${i}`));
    created(view('el_0'));
    expect(sent).toHaveLength(4);
    expect(logged('too many notifications waiting to be sent: dropping new ones until the queue drains')).toHaveLength(1);
    // el_50 waits in the queue; it ends before its turn.
    removed('el_50');
    for (let round = 0; round < 200 && release.length > 0; round++) {
      for (const go of release.splice(0)) go();
      await settle();
      expect(release.length).toBeLessThanOrEqual(4);
    }
    const ids = ntfy().map((s) => (JSON.parse(s.body) as { click: string }).click.split('/').pop());
    expect(ids).toHaveLength(4 + MAX_QUEUED - 1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain('el_50');
    expect(ids).not.toContain(`el_${4 + MAX_QUEUED}`);
    expect(logged('notifications dropped while the queue was full')).toEqual([['warn', 'notifications dropped while the queue was full', { dropped: 200 - 4 - MAX_QUEUED }]]);
  });
});

describe('the texts', () => {
  it('an agent name loses control, format and line-separator characters and is clipped to 60', () => {
    expect(agentName('Claude\u202e edoC\n\u0007x')).toBe('Claude edoC x');
    expect(agentName('\u200b \t')).toBe('an agent');
    expect(agentName('日本語エージェント')).toBe('日本語エージェント');
    const long = agentName('a'.repeat(100));
    expect(Array.from(long)).toHaveLength(60);
    expect(long.endsWith('…')).toBe(true);
    expect(Array.from(agentName('😀'.repeat(70)))).toHaveLength(60);
  });

  it('ntfy: the topic is the URL’s last segment, the server what comes before it', () => {
    const fields = { title: 't', click: 'c', kind: 'approval', priority: 4 };
    expect(ntfyPublish('https://ntfy.sh/my_topic-1', fields)?.url).toBe('https://ntfy.sh/');
    expect(ntfyPublish('https://home.example:8443/ntfy/alerts?x=1', fields)).toMatchObject({ url: 'https://home.example:8443/ntfy/' });
    expect(JSON.parse(ntfyPublish('https://home.example/ntfy/alerts', fields)?.body ?? '')).toMatchObject({ topic: 'alerts' });
    expect(JSON.parse(ntfyPublish('https://ntfy.sh/alerts/', fields)?.body ?? '')).toMatchObject({ topic: 'alerts' });
    expect(ntfyPublish('https://ntfy.sh/', fields)).toBeNull();
    expect(ntfyPublish('https://ntfy.sh/bad%20topic', fields)).toBeNull();
  });

  it('a review link escapes the id', () => {
    expect(reviewUrl({ ...settings, origins: ['http://localhost:9000'] }, 1, 'el_a/b#c')).toBe('http://localhost:9000/phone/#/r/el_a%2Fb%23c');
  });

  it('an ntfy URL without a topic is logged and nothing is sent', async () => {
    settings = { ...settings, webhook: undefined, ntfy: { url: 'https://ntfy.sh/' } };
    start();
    created(view('el_x'));
    await settle();
    expect(sent).toEqual([]);
    expect(logSpy).toHaveBeenCalledWith('warn', expect.stringContaining('does not end in a topic name'), { type: 'request.waiting' });
  });
});
