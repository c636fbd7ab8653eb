import { browser } from 'wxt/browser';
import type { Platform } from '../../extension/background/background-controller.js';
import type { RequestRow } from '../../extension/db/rows.js';
import { revealHidden } from '../../shared/visible-text.js';

/** Notification ids carry the request id so a click can open its review. */
export const NOTIFICATION_PREFIX = 'elicitly:';

function reviewUrl(elicitationId: string): string {
  return `${browser.runtime.getURL('/review.html')}#/review/${encodeURIComponent(elicitationId)}`;
}

export function createPlatform(): Platform {
  return {
    async setBadge(count) {
      await browser.action.setBadgeText({ text: count === 0 ? '' : count > 99 ? '99+' : String(count) });
      await browser.action.setBadgeBackgroundColor({ color: '#b45309' });
    },
    async notify(row: RequestRow) {
      // Plain text: notifications never interpret markup. Characters that would not show are spelled out, as in the
      // review, and the message is clipped to what fits.
      const message = revealHidden(row.message);
      await browser.notifications.create(`${NOTIFICATION_PREFIX}${row.elicitationId}`, {
        type: 'basic',
        iconUrl: browser.runtime.getURL('/icon/128.png'),
        title: `${row.kind === 'proposal' ? 'Proposal' : 'Approval'} from ${revealHidden(row.agent)}`,
        message: message.length > 200 ? `${message.slice(0, 199)}…` : message,
      });
    },
    async clearNotification(elicitationId) {
      await browser.notifications.clear(`${NOTIFICATION_PREFIX}${elicitationId}`);
    },
    newKey: () => crypto.randomUUID(),
  };
}

/** A click on a request's notification opens its review in a tab (a popup cannot be opened reliably). */
export function listenForNotificationClicks(): void {
  browser.notifications.onClicked.addListener((id: string) => {
    if (!id.startsWith(NOTIFICATION_PREFIX)) return;
    void browser.tabs.create({ url: reviewUrl(id.slice(NOTIFICATION_PREFIX.length)) });
    void browser.notifications.clear(id);
  });
}
