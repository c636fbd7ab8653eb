import { Store } from '../kit/ui/store.js';
import { PushSubscriptionSchema, type PushSubscription } from '../shared/push-notice.js';
import { fromBase64url } from '../shared/passkey.js';

/**
 * "Notifications on this phone": the browser's push subscription and the hub's record of it, kept in step. Turned on
 * by the person (the browser asks its permission in that tap), sent to the hub over the page's socket, and checked
 * again at every connection: a browser that renewed its subscription sends the new one, and one the person revoked in
 * the browser's settings is dropped at the hub too.
 */
export type PushState =
  | { state: 'unsupported'; why: string }
  | { state: 'checking' | 'working' | 'on' }
  | { state: 'off'; error?: string }
  /** The person said no to notifications for this site: only the browser's settings can change that. */
  | { state: 'blocked' };

/** The browser's side (Notification, the service worker's PushManager); tests hand in a fake. */
export interface PushPlatform {
  /** Why this browser cannot get pushes here, or null. */
  unsupported(): string | null;
  permission(): 'default' | 'granted' | 'denied';
  requestPermission(): Promise<'default' | 'granted' | 'denied'>;
  /** The current subscription as `toJSON()` gives it, or null. */
  current(): Promise<unknown>;
  subscribe(applicationServerKey: Uint8Array): Promise<unknown>;
  unsubscribe(): Promise<void>;
}

/** The hub's side: the device's push calls over the page's socket. */
export interface PushHub {
  info(): Promise<{ ok: true; value: { publicKey: string; subscribed: boolean } } | { ok: false; message: string }>;
  subscribe(subscription: PushSubscription | null): Promise<{ ok: true; value: { subscribed: boolean; issues?: { message: string }[] } } | { ok: false; message: string }>;
}

export interface PushControl {
  state: Store<PushState>;
  /** Brings the hub in step with the browser; run at every connection. */
  refresh(): Promise<void>;
  turnOn(): Promise<void>;
  turnOff(): Promise<void>;
}

function asSubscription(value: unknown): PushSubscription | null {
  const parsed = PushSubscriptionSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

export function createPushControl(platform: PushPlatform, hub: PushHub): PushControl {
  const why = platform.unsupported();
  const state = new Store<PushState>(why === null ? { state: 'checking' } : { state: 'unsupported', why });
  let busy = false;

  /** One change at a time: a second tap while the first is under way does nothing. */
  const run = async (work: () => Promise<PushState>): Promise<void> => {
    if (why !== null || busy) return;
    busy = true;
    try {
      state.set(await work());
    } catch (error) {
      state.set({ state: 'off', error: error instanceof Error ? error.message : String(error) });
    } finally {
      busy = false;
    }
  };

  const send = async (subscription: PushSubscription | null): Promise<PushState> => {
    const answer = await hub.subscribe(subscription);
    if (!answer.ok) return { state: 'off', error: answer.message };
    if (answer.value.issues?.length) return { state: 'off', error: answer.value.issues.map((i) => i.message).join('; ') };
    return answer.value.subscribed ? { state: 'on' } : { state: 'off' };
  };

  return {
    state,
    refresh: () =>
      run(async () => {
        if (platform.permission() === 'denied') return { state: 'blocked' };
        const current = platform.permission() === 'granted' ? asSubscription(await platform.current()) : null;
        if (current) return send(current);
        const info = await hub.info();
        if (!info.ok) return { state: 'off', error: info.message };
        return info.value.subscribed ? send(null) : { state: 'off' };
      }),
    turnOn: () =>
      run(async () => {
        state.set({ state: 'working' });
        const permission = await platform.requestPermission();
        if (permission === 'denied') return { state: 'blocked' };
        if (permission !== 'granted') return { state: 'off', error: 'Notifications were not allowed.' };
        const info = await hub.info();
        if (!info.ok) return { state: 'off', error: info.message };
        const subscription = asSubscription(await platform.subscribe(fromBase64url(info.value.publicKey)));
        if (!subscription) return { state: 'off', error: 'The browser gave a push subscription this page cannot use.' };
        return send(subscription);
      }),
    turnOff: () =>
      run(async () => {
        state.set({ state: 'working' });
        await platform.unsubscribe();
        return send(null);
      }),
  };
}
