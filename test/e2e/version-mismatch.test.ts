// The built extension in headless Chromium against a fake hub of another protocol version: the header must say which
// side to update, whether the hub is newer (it closes with 4002 and names its version) or older (a hub of protocols 1
// to 8 cannot read this protocol's `{ id, method, params }` hello: protocol 8 answers it with its own
// `{ type: "error", code: "invalid_message" }` frame and keeps the socket). The extension is pairing (it has no key yet):
// a hub of another version answers before any proof, and that answer is not a refusal of the code, so the code is kept
// for the retries.
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { CLOSE_PROTOCOL_MISMATCH, PROTOCOL_VERSION, protocolMismatchReason } from '../../shared/wire-protocol.js';
import { browserFound, chromiumSuite, launchExtension, type ExtensionBrowser } from './extension-browser.js';

const UI_TIMEOUT = 15_000;
const NEWER = PROTOCOL_VERSION + 1;

const title = chromiumSuite('the extension against a hub of another protocol version');

describe.skipIf(!browserFound)(title, () => {
  let hub: WebSocketServer;
  let browser: ExtensionBrowser;
  let popup: Page;
  let behaves: 'newer' | 'older' = 'newer';
  const hellos: unknown[] = [];
  const pageErrors: string[] = [];

  async function saveSettings(): Promise<void> {
    await popup.getByRole('button', { name: 'Save' }).click();
    await popup.getByText('Saved.').waitFor({ timeout: UI_TIMEOUT });
  }

  beforeAll(async () => {
    // A stand-in hub that checks nothing: it reads the hello and answers the way a hub of another version does.
    hub = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => hub.once('listening', resolve));
    hub.on('connection', (socket) => {
      socket.on('error', () => undefined);
      socket.once('message', (data) => {
        hellos.push(JSON.parse(String(data)));
        if (behaves === 'newer') socket.close(CLOSE_PROTOCOL_MISMATCH, protocolMismatchReason(NEWER));
        // What a protocol 8 hub answers a frame without its `type`: its schema refuses it, the socket stays open.
        else socket.send(JSON.stringify({ type: 'error', code: 'invalid_message', message: 'type: Invalid input: expected "hello"' }));
      });
    });
    browser = await launchExtension();
    popup = await browser.openPopup('#/settings');
    popup.on('pageerror', (error) => pageErrors.push(error.message));
    await popup.getByLabel('Hub port').fill(String((hub.address() as AddressInfo).port));
    await saveSettings();
    // With no key the extension opens no socket; pairing is what makes it talk to whatever is on the port.
    await popup.getByLabel('Pairing code').fill('0a1b2c3d4e5f');
    await popup.getByRole('button', { name: 'Pair', exact: true }).click();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const client of hub?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (hub ? hub.close(() => resolve()) : resolve()));
  });

  it('a newer hub (close 4002, "hub speaks protocol N"): the header says to update the extension', async () => {
    const header = popup.locator('[data-state="version_mismatch"]').first();
    await header.waitFor({ timeout: UI_TIMEOUT });
    // The header counts down to the next attempt, as for every state that retries.
    expect(await header.textContent()).toMatch(new RegExp(
      `^Version mismatch: the hub speaks protocol ${NEWER}, this extension protocol ${PROTOCOL_VERSION}\\. Update the Elicitly extension\\.( Next try in \\d+ s\\.| Trying now…)$`,
    ));
    expect(hellos[0]).toMatchObject({ id: expect.any(String), method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', pairing: true } });
  });

  it('an older hub (protocol 8: its own error frame answers the hello): the header says to update the server and restart agents', async () => {
    behaves = 'older';
    const before = hellos.length;
    // Saving reconnects at once instead of after the backoff.
    await saveSettings();
    const header = popup.getByRole('status').filter({ hasText: 'Update elicitly-companion' }).first();
    await header.waitFor({ timeout: UI_TIMEOUT });
    expect(await header.textContent()).toMatch(new RegExp(
      `^Version mismatch: the hub speaks an older protocol, this extension protocol ${PROTOCOL_VERSION}\\. `
      + 'Update elicitly-companion \\(the MCP server: npx -y elicitly-companion@latest\\) and restart your agents\\.( Next try in \\d+ s\\.| Trying now…)$',
    ));
    expect(hellos.length).toBeGreaterThan(before);
  });

  it('keeps retrying with backoff, not in a tight loop, and the popup threw no uncaught error', async () => {
    const before = hellos.length;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    // The backoff after a reconnect from Settings waits ≥ 0.5 s, then ≥ 1 s, then ≥ 2 s: a handful of tries at most.
    expect(hellos.length - before).toBeLessThanOrEqual(4);
    expect(pageErrors).toEqual([]);
  });
});
