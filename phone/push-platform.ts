import type { PushPlatform } from './push-control.js';

/** The page's browser as `push-control.ts` uses it: Notification and the service worker's PushManager. */
export function browserPushPlatform(): PushPlatform {
  const registration = (): Promise<ServiceWorkerRegistration> => navigator.serviceWorker.ready;
  return {
    unsupported: () => {
      if (!('serviceWorker' in navigator) || typeof Notification === 'undefined' || typeof PushManager === 'undefined') {
        // iOS and iPadOS give pushes only to a web app added to the Home Screen (16.4 and later).
        return 'This browser has no Web Push here. On an iPhone or iPad, add this page to the Home Screen and open it from there.';
      }
      return null;
    },
    permission: () => Notification.permission,
    requestPermission: () => Notification.requestPermission(),
    current: async () => (await (await registration()).pushManager.getSubscription())?.toJSON() ?? null,
    subscribe: async (applicationServerKey) => (await (await registration()).pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: applicationServerKey.slice().buffer })).toJSON(),
    unsubscribe: async () => {
      await (await (await registration()).pushManager.getSubscription())?.unsubscribe();
    },
  };
}
