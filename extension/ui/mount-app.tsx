import '../zod-config.js';
import { render } from 'preact';
import { openDb } from '../db/database.js';
import type { UiMessage } from '../messages.js';
import { App } from './app.js';
import { createRuntimeClient } from './runtime-client.js';
import './styles.css';

interface PageBrowser {
  sendMessage(message: UiMessage): Promise<unknown>;
  openTab(path: string): Promise<unknown>;
}

/** The popup and the review tab are the same app; the entrypoints only hand it the browser. */
export function mountApp(mode: 'popup' | 'tab', page: PageBrowser): void {
  const db = openDb();
  const client = createRuntimeClient((m) => page.sendMessage(m));
  // The worker may be asleep; a page opening is reason enough to reconnect. No answer is fine.
  page.sendMessage({ type: 'wake' }).catch(() => undefined);
  const root = document.getElementById('app');
  if (!root) return;
  render(<App db={db} client={client} mode={mode} openInTab={(hash) => void page.openTab(`/review.html${hash}`).catch(() => undefined)} />, root);
}
