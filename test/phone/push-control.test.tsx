// Issue 35, part 1: "Notifications on this phone" kept in step between the browser and the hub, and what the
// notification says after its button was pressed.
import { fireEvent, render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { createPushControl, type PushHub, type PushPlatform } from '../../phone/push-control.js';
import { outcomeNotice } from '../../phone/push-outcome.js';
import { PushSettings } from '../../phone/push-settings.js';
import type { PushPayload, PushSubscription } from '../../shared/push-notice.js';

const PUBLIC_KEY = `B${'A'.repeat(86)}`;
const SUBSCRIPTION: PushSubscription = { endpoint: 'https://fcm.googleapis.com/fcm/send/x', expirationTime: null, keys: { p256dh: `B${'b'.repeat(86)}`, auth: 'c'.repeat(22) } };

function fakes(options: { permission?: 'default' | 'granted' | 'denied'; answer?: 'default' | 'granted' | 'denied'; current?: unknown; hubSubscribed?: boolean; refuse?: string } = {}) {
  let permission = options.permission ?? 'default';
  let current = options.current ?? null;
  const sent: (PushSubscription | null)[] = [];
  const platform: PushPlatform = {
    unsupported: () => null,
    permission: () => permission,
    requestPermission: async () => (permission = options.answer ?? 'granted'),
    current: async () => current,
    subscribe: async (key) => {
      expect(key).toHaveLength(65);
      current = SUBSCRIPTION;
      return SUBSCRIPTION;
    },
    unsubscribe: async () => {
      current = null;
    },
  };
  const hub: PushHub = {
    info: async () => ({ ok: true, value: { publicKey: PUBLIC_KEY, subscribed: options.hubSubscribed ?? false } }),
    subscribe: async (subscription) => {
      sent.push(subscription);
      if (options.refuse) return { ok: true, value: { subscribed: false, issues: [{ message: options.refuse }] } };
      return { ok: true, value: { subscribed: subscription !== null } };
    },
  };
  return { platform, hub, sent };
}

describe('createPushControl', () => {
  it('turning on asks the browser, subscribes with the hub\'s key and sends the subscription; off unsubscribes both', async () => {
    const { platform, hub, sent } = fakes();
    const push = createPushControl(platform, hub);
    await push.turnOn();
    expect(push.state.get()).toEqual({ state: 'on' });
    expect(sent).toEqual([SUBSCRIPTION]);
    await push.turnOff();
    expect(push.state.get()).toEqual({ state: 'off' });
    expect(sent).toEqual([SUBSCRIPTION, null]);
  });

  it('a person who says no is told it is blocked in the browser; the hub is told nothing', async () => {
    const { platform, hub, sent } = fakes({ answer: 'denied' });
    const push = createPushControl(platform, hub);
    await push.turnOn();
    expect(push.state.get()).toEqual({ state: 'blocked' });
    expect(sent).toEqual([]);
  });

  it('the hub\'s refusal is shown as it names the field', async () => {
    const { platform, hub } = fakes({ refuse: 'subscription.endpoint: must be a browser\'s push service' });
    const push = createPushControl(platform, hub);
    await push.turnOn();
    expect(push.state.get()).toEqual({ state: 'off', error: 'subscription.endpoint: must be a browser\'s push service' });
  });

  it('each connection sends the browser\'s current subscription (renewed), or drops the hub\'s when the browser has none', async () => {
    const renewed = fakes({ permission: 'granted', current: SUBSCRIPTION });
    const a = createPushControl(renewed.platform, renewed.hub);
    await a.refresh();
    expect(a.state.get()).toEqual({ state: 'on' });
    expect(renewed.sent).toEqual([SUBSCRIPTION]);

    const revoked = fakes({ permission: 'default', hubSubscribed: true });
    const b = createPushControl(revoked.platform, revoked.hub);
    await b.refresh();
    expect(b.state.get()).toEqual({ state: 'off' });
    expect(revoked.sent).toEqual([null]);

    const never = fakes();
    const c = createPushControl(never.platform, never.hub);
    await c.refresh();
    expect(c.state.get()).toEqual({ state: 'off' });
    expect(never.sent).toEqual([]);
  });

  it('a browser without Web Push says how to get it and offers no button', () => {
    const { platform, hub } = fakes();
    const push = createPushControl({ ...platform, unsupported: () => 'add this page to the Home Screen' }, hub);
    render(<PushSettings push={push} connected />);
    expect(screen.getByRole('status').textContent).toBe('add this page to the Home Screen');
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('the button says what it does and is off while not connected', async () => {
    const { platform, hub } = fakes();
    const push = createPushControl(platform, hub);
    await push.refresh();
    const { rerender } = render(<PushSettings push={push} connected={false} />);
    expect(screen.getByRole('button', { name: 'Turn on' }).hasAttribute('disabled')).toBe(true);
    rerender(<PushSettings push={push} connected />);
    fireEvent.click(screen.getByRole('button', { name: 'Turn on' }));
    await screen.findByRole('button', { name: 'Turn off' });
    expect(screen.getByRole('status').textContent).toMatch(/^On: /);
  });
});

describe('outcomeNotice', () => {
  const payload: PushPayload = {
    v: 1, type: 'request.waiting', elicitationId: 'el_1', title: 'Approval from a', body: 'Deploy?\nbuild: 1', shownHash: 'a'.repeat(64),
    actions: [{ action: 'approve', title: 'Approve', decision: { decision: 'approved' } }, { action: 'deny', title: 'Decline', decision: { decision: 'rejected' } }],
    expiresAt: 0,
  };
  const [approve] = payload.actions;
  if (!approve) throw new Error('fixture');
  it.each([
    [{ state: 'answered', answer: { ok: true, status: 'approved' } }, 'Approve: sent and recorded', false],
    [{ state: 'answered', answer: { ok: false, reason: 'already_decided' } }, 'Not recorded: it was already decided elsewhere', false],
    [{ state: 'answered', answer: { ok: false, reason: 'expired' } }, 'Not recorded: it has expired', false],
    [{ state: 'unproven', message: 'x' }, 'Not sent: this phone is not paired with the hub any more', false],
    [{ state: 'unreachable', message: 'x' }, 'Not sent: the hub could not be reached. Try again, or open the review', true],
    [{ state: 'no_answer', message: 'x' }, 'No answer from the hub: open the review to see whether it was recorded', false],
  ] as const)('%j', (result, title, retry) => {
    const notice = outcomeNotice(payload, approve, result);
    expect(notice.title).toBe(title);
    expect(notice.retry).toBe(retry);
  });
});
