import { browser } from 'wxt/browser';
import type { Platform } from '../../extension/background/background-controller.js';
import type { RequestRow } from '../../extension/db/rows.js';
import { KIND_LABEL } from '../../extension/ui/labels.js';
import { revealHidden } from '../../extension/core/visible-text.js';

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
 * Each manifest version has only one of the two namespaces (MV3 `action`, MV2 `browserAction`). Typed here because
 * `browser` from wxt/browser is untyped under this tsconfig (@wxt-dev/browser's declarations import './gen' without
 * an extension, which NodeNext cannot resolve), so nothing else would make the code check which one is there.
 */
function badgeApi(): BadgeApi | undefined {
  const action: BadgeApi | undefined = browser.action;
  const browserAction: BadgeApi | undefined = browser.browserAction;
  return action ?? browserAction;
}

/** `log` gets the first badge failure only: the badge is set on every change, and one broken API would flood it. */
export function createPlatform(log: (message: string) => void = (m) => console.warn(`[elicitly] ${m}`)): Platform {
  let badgeFailureLogged = false;
  return {
    async setBadge(count) {
      try {
        const api = badgeApi();
        if (!api) throw new Error('this browser has neither browser.action nor browser.browserAction');
        await api.setBadgeText({ text: count === 0 ? '' : count > 99 ? '99+' : String(count) });
        await api.setBadgeBackgroundColor({ color: '#b45309' });
      } catch (error) {
        if (!badgeFailureLogged) {
          badgeFailureLogged = true;
          log(`the toolbar badge cannot be set: ${error instanceof Error ? error.message : String(error)}`);
        }
        // Still a failure for the caller: only the logging is limited.
        throw error;
      }
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
  browser.notifications.onClicked.addListener((id: string) => {
    if (!id.startsWith(NOTIFICATION_PREFIX)) return;
    void browser.tabs.create({ url: reviewUrl(id.slice(NOTIFICATION_PREFIX.length)) });
    void browser.notifications.clear(id);
  });
}
