import { browser } from '../../extension/browser.js';
import type { Platform } from '../../extension/background/background-controller.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import { KIND_LABEL } from '../../kit/ui/labels.js';
import { revealHidden } from '../../kit/core/visible-text.js';

/** Notification ids carry the request id so a click can open its review. */
export const NOTIFICATION_PREFIX = 'elicitly:';

function reviewUrl(elicitationId: string): string {
  return `${browser.runtime.getURL('/review.html')}#/review/${encodeURIComponent(elicitationId)}`;
}

/** The two badge calls MV3's `action` and MV2's `browserAction` (the Firefox build) have in common. */
interface BadgeApi {
  setBadgeText(details: { text: string }): Promise<void> | void;
  setBadgeBackgroundColor(details: { color: string }): Promise<void> | void;
}

/**
 * Each manifest version has only one of the two namespaces (MV3 `action`, MV2 `browserAction`), though the types
 * declare both: read as possibly missing, so the code checks which one is there.
 */
function badgeApi(): BadgeApi | undefined {
  const action: BadgeApi | undefined = browser.action;
  const browserAction: BadgeApi | undefined = browser.browserAction;
  return action ?? browserAction;
}

/** A failure rejects (the badge cannot be set, or either call threw): the controller logs it (`refreshBadge`). */
export function createPlatform(): Platform {
  return {
    async setBadge(count) {
      const api = badgeApi();
      if (!api) throw new Error('this browser has neither browser.action nor browser.browserAction');
      await api.setBadgeText({ text: count === 0 ? '' : count > 99 ? '99+' : String(count) });
      await api.setBadgeBackgroundColor({ color: '#b45309' });
    },
    async notify(row: RequestRow) {
      // Plain text: notifications never interpret markup. Characters that would not show are spelled out, as in the
      // review, and the message is clipped to what fits.
      const message = revealHidden(row.message);
      await browser.notifications.create(`${NOTIFICATION_PREFIX}${row.elicitationId}`, {
        type: 'basic',
        iconUrl: browser.runtime.getURL('/icon/128.png'),
        title: `${KIND_LABEL[row.kind]} from ${revealHidden(row.agent)}`,
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
  browser.notifications.onClicked.addListener((id) => {
    if (!id.startsWith(NOTIFICATION_PREFIX)) return;
    void browser.tabs.create({ url: reviewUrl(id.slice(NOTIFICATION_PREFIX.length)) });
    void browser.notifications.clear(id);
  });
}
