import '../../kit/zod-config.js';
import { render } from 'preact';
import { openDb } from '../db/database.js';
import type { UiMessage } from '../messages.js';
import { App } from './app.js';
import { loadChecks } from './page-reads.js';
import { createRuntimeClient } from './runtime-client.js';
import '../../kit/ui/styles.css';

interface PageBrowser {
  sendMessage(message: UiMessage): Promise<unknown>;
  openTab(path: string): Promise<unknown>;
  /** Asks the person for host permissions (Firefox's passkeys borrow `elicitly.localhost`); called in a click handler. */
  grantOrigins(origins: string[]): Promise<boolean>;
}

/** The popup and the review tab are the same app; the entrypoints only hand it the browser. */
export function mountApp(mode: 'popup' | 'tab', page: PageBrowser): void {
  // The checks every read waits for, and the database: both under way while the first paint happens (Dexie would
  // otherwise open the database on the first read, after it).
  void loadChecks();
  const db = openDb();
  db.open().catch(() => undefined); // a failure to open is each read's to report
  const client = { ...createRuntimeClient((m) => page.sendMessage(m)), grantOrigins: (origins: string[]) => page.grantOrigins(origins) };
  // The worker may be asleep; a page opening is reason enough to reconnect. No answer is fine.
  page.sendMessage({ type: 'wake' }).catch(() => undefined);
  const root = document.getElementById('app');
  if (!root) return;
  render(<App db={db} client={client} mode={mode} openInTab={(hash) => void page.openTab(`/review.html${hash}`).catch(() => undefined)} />, root);
}
