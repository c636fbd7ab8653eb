import '../../kit/zod-config.js';
import { browser } from '../../extension/browser.js';
import { defineBackground } from 'wxt/utils/define-background';
import { BackgroundController } from '../../extension/background/background-controller.js';
import { openDb } from '../../extension/db/database.js';
import { openBrowserSocket } from '../../kit/hub/browser-socket.js';
import { openWelcomeOnInstall } from './first-run.js';
import { createPlatform, listenForNotificationClicks } from './platform.js';
import { ensureSafetyAlarm, onSafetyAlarm } from './safety-alarm.js';

// Thin composition: the store, the hub connection and the decision outbox live in extension/background; this file
// only hands them the browser. Listeners are registered synchronously so a wake-up event is never missed.
export default defineBackground(() => {
  const db = openDb();
  const controller = new BackgroundController({
    db,
    platform: createPlatform(),
    socketFactory: openBrowserSocket,
    clock: { now: () => Date.now(), random: () => Math.random(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
    client: { name: 'elicitly-companion-extension', version: browser.runtime.getManifest().version },
    log: (m) => console.warn(`[elicitly] ${m}`),
  });
  controller.start();

  browser.runtime.onMessage.addListener((message: unknown, _sender, sendResponse) => {
    void controller.handleUiMessage(message).then(sendResponse, (e: unknown) => sendResponse({ state: 'error', message: String(e) }));
    return true;
  });
  onSafetyAlarm(() => void controller.tick());
  listenForNotificationClicks();
  openWelcomeOnInstall();
  void ensureSafetyAlarm();
});
