import '../../extension/zod-config.js';
import { browser } from 'wxt/browser';
import { defineBackground } from 'wxt/utils/define-background';
import { BackgroundController } from '../../extension/background/background-controller.js';
import { openDb } from '../../extension/db/database.js';
import { readConnection } from '../../extension/db/settings-repo.js';
import { openBrowserSocket } from '../../extension/hub/browser-socket.js';
import { createPlatform, listenForNotificationClicks } from './platform.js';
import { ensureSafetyAlarm, onSafetyAlarm } from './safety-alarm.js';

// Thin composition: the store, the hub connection and the decision outbox live in extension/background; this file
// only hands them the browser. Listeners are registered synchronously so a wake-up event is never missed.
export default defineBackground(() => {
  const db = openDb();
  const ready = (async () => {
    const previous = await readConnection(db);
    const controller = new BackgroundController({
      db,
      platform: createPlatform(),
      socketFactory: openBrowserSocket,
      clock: { now: () => Date.now(), random: () => Math.random(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
      client: { name: 'elicitly-companion-extension', version: browser.runtime.getManifest().version },
      // Chrome's origin is pinned by the manifest key; Firefox gives every install its own moz-extension:// origin.
      originNeedsPairing: location.protocol === 'moz-extension:',
      everConnected: previous?.everConnected ?? false,
      log: (m) => console.warn(`[elicitly] ${m}`),
    });
    controller.start();
    return controller;
  })();

  browser.runtime.onMessage.addListener((message: unknown, _sender: unknown, sendResponse: (reply: unknown) => void) => {
    void ready.then((c) => c.handleUiMessage(message)).then(sendResponse, (e: unknown) => sendResponse({ state: 'error', message: String(e) }));
    return true;
  });
  onSafetyAlarm(() => void ready.then((c) => c.tick()));
  listenForNotificationClicks();
  void ensureSafetyAlarm();
});
