// Before anything parses: the page's CSP has no 'unsafe-eval', and zod would probe `new Function` on first use.
import '../kit/zod-config.js';
import { render } from 'preact';
import { openBrowserSocket } from '../kit/hub/browser-socket.js';
import { openKeyStore } from './device-key.js';
import { createPushControl } from './push-control.js';
import { browserPushPlatform } from './push-platform.js';
import { suggestedDeviceName } from './device-name.js';
import { PhoneApp } from './phone-app.js';
import { createPhoneSession } from './phone-session.js';
import { parseRoute } from './route.js';
import '../kit/ui/styles.css';
import './phone.css';

/** The hub writes its own port into the page as it serves it: every proof is bound to it. 0: not served by a hub. */
function hubPort(): number | null {
  const port = Number(document.querySelector('meta[name="elicitly-hub-port"]')?.getAttribute('content'));
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
}

/** The pairing code (and its serial) from the QR's link, taken out of the address at once so it stays in no history entry. */
function takePairCode(): { code: string; serial: number | null } | null {
  const route = parseRoute(location.hash);
  if (route.view !== 'pair') return null;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  return { code: route.code, serial: route.serial };
}

/** The page's service worker: it shows pushed notifications and sends their Approve / Deny (`worker/push-worker.ts`). */
function registerWorker(): void {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('worker.js', { scope: './' }).catch((error: unknown) => console.warn(`elicitly: the service worker could not be registered: ${String(error)}`));
}

async function start(root: HTMLElement, port: number): Promise<void> {
  const pairCode = takePairCode();
  const origin = location.origin;
  const log = (message: string) => console.warn(`elicitly: ${message}`);
  const keys = await openKeyStore(indexedDB, { hubPort: port, origin }, { legacy: localStorage, log });
  const { session, connection } = createPhoneSession({
    url: `${origin.replace(/^http/, 'ws')}/phone/socket`,
    hubPort: port,
    origin,
    socketFactory: openBrowserSocket,
    clock: { now: () => Date.now(), random: () => Math.random(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
    keys,
    client: { name: 'elicitly-phone', version: __ELICITLY_VERSION__ },
    log,
  });
  // A phone suspends a page in the background and its socket with it: coming back, connect now rather than after the backoff.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') connection.ensure();
  });
  const push = createPushControl(browserPushPlatform(), {
    info: () => connection.push('push.info', {}),
    subscribe: (subscription) => connection.push('push.subscribe', { subscription }),
  });
  // Each connection brings the hub in step with this browser's subscription (renewed, or revoked in its settings).
  let wasConnected = false;
  session.state.subscribe(() => {
    const connected = session.state.get()?.state === 'connected';
    if (connected && !wasConnected) void push.refresh();
    wasConnected = connected;
  });
  render(<PhoneApp session={session} pairCode={pairCode?.code ?? null} pairSerial={pairCode?.serial ?? null} suggestedName={suggestedDeviceName(navigator.userAgent)} push={push} />, root);
  connection.ensure();
  registerWorker();
}

const root = document.getElementById('app');
const port = hubPort();
if (root && port === null) {
  render(<p role="alert" class="error">This page works only as the Elicitly hub serves it, at /phone/ on the hub's address.</p>, root);
} else if (root && port !== null) {
  void start(root, port);
}
