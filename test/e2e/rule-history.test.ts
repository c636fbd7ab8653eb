// Rules and the person's history, in the built extension in headless Chromium: a rule tried on the history before it
// is saved (the dry run of "Always allow…" in a review: the count, and a question the person answered the other way,
// flagged), and a rule the person's repeated answers suggest in the Rules view (one button opens the editor with it;
// nothing reaches the hub until Save). A stand-in hub speaks the hub's side of the protocol: it pairs, welcomes with one
// pending prompt and one rule (answered 37 times), files the history the way the hub tells of requests decided on
// another surface (`request.created`, then `request.removed` with `decidedVia`), and answers `rule.save`.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { randomHex } from '../../shared/hub-auth.js';
import { parseParams } from '../../shared/peer-calls.js';
import type { PermissionRequest } from '../../shared/permission.js';
import { DEFAULT_RULE_DAYS, type Rule } from '../../shared/rules.js';
import { PROTOCOL_VERSION, PeerFrameSchema, type PeerFrame, type RequestView } from '../../shared/wire-protocol.js';
import { expectAccessibleInEachScheme } from './axe-schemes.js';
import { StandInHandshake, sendFrame } from './stand-in-hub.js';
import { browserFound, chromiumSuite, launchExtension, pairInSettings, setHubPort, type ExtensionBrowser } from './extension-browser.js';

const UI_TIMEOUT = 15_000;
const ARTIFACTS = join(process.cwd(), 'test-results');
const title = chromiumSuite('rules tried on the history');

describe.skipIf(!browserFound)(title, () => {
  const CODE = '0a1b2c3d4e5f';
  const KEY = '7c'.repeat(32);
  const KEY_ID = 'k_00000000000000e2';
  const CWD = '/home/dev/project';
  const SESSION = 'sess-e2e';
  const now = Date.now();
  let hub: WebSocketServer;
  let browser: ExtensionBrowser;
  let popup: Page;
  const sockets: WebSocket[] = [];
  const received: PeerFrame[] = [];
  const pageErrors: string[] = [];

  const existing: Rule = {
    id: 'rule_00000000000000e1', effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm run lint', agent: 'claude-code' },
    createdAt: now - 10 * 86_400_000, expiresAt: null, hits: 37, lastHitAt: now - 2 * 3_600_000 - 60_000,
  };
  let rules: Rule[] = [existing];
  let historySent = false;

  const message = (command: string) => `Claude Code wants to run a command (${command})`;
  function view(id: string, command: string, createdAt: number): RequestView {
    const request: PermissionRequest = {
      kind: 'permission', message: message(command), host: 'claude-code', event: 'PermissionRequest', tool: 'Bash',
      input: { command }, command, cwd: CWD, sessionId: SESSION, editable: true, suggestions: [], timeoutSeconds: 3600,
    };
    return { elicitationId: id, kind: 'permission', status: 'pending', message: message(command), createdAt, expiresAt: createdAt + 3_600_000, requester: { client: 'claude-code', pid: 7 }, request, renderedTemplate: null };
  }
  // What the person answered before, on their phone: newest last.
  const history: [string, string, 'approved' | 'rejected'][] = [
    ['el_h_push_1', 'git push', 'approved'],
    ['el_h_force', 'git push --force', 'rejected'],
    ['el_h_push_2', 'git push origin dev', 'approved'],
    ...Array.from({ length: 6 }, (_, i): [string, string, 'approved'] => [`el_h_test_${i}`, i % 2 ? 'npm test -- --bail' : 'npm test', 'approved']),
    ['el_h_rm', 'rm -rf build', 'rejected'],
  ];
  const pending = view('el_pending_push', 'git push origin main', now);

  const ruleSaves = () => received.filter((f) => f.method === 'rule.save');

  beforeAll(async () => {
    hub = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => hub.once('listening', resolve));
    hub.on('connection', (socket) => {
      sockets.push(socket);
      const handshake = new StandInHandshake({ code: CODE, key: KEY, keyId: KEY_ID }, () => (hub.address() as AddressInfo).port);
      let queue = Promise.resolve();
      socket.on('error', () => undefined);
      socket.on('message', (data) => {
        queue = queue.then(async () => {
          const frame = PeerFrameSchema.parse(JSON.parse(String(data)));
          received.push(frame);
          if (frame.id === undefined) return;
          const step = await handshake.answer(socket, frame, () => ({ protocol: PROTOCOL_VERSION, hubPid: 1, pending: [pending], rules }));
          if (step === 'auth') {
            if (historySent) return;
            historySent = true;
            // The history, as the hub tells of requests another surface decided.
            history.forEach(([id, command, status], i) => {
              sendFrame(socket, { method: 'request.created', params: { request: view(id, command, now - 60_000 * (history.length - i)) } });
              sendFrame(socket, { method: 'request.removed', params: { elicitationId: id, status, decidedVia: 'phone' } });
            });
          } else if (frame.method === 'rule.save') {
            const save = parseParams('rule.save', frame.params);
            if (!save.success) return sendFrame(socket, { id: frame.id, result: { ok: false } });
            const rule: Rule = { id: `rule_${randomHex(8)}`, createdAt: Date.now(), ...save.data.rule };
            rules = [...rules, rule];
            sendFrame(socket, { id: frame.id, result: { ok: true, id: rule.id } });
            sendFrame(socket, { method: 'rules.changed', params: { rules } });
          }
        });
      });
    });
    browser = await launchExtension();
    popup = await browser.openPopup('#/settings');
    popup.setDefaultTimeout(UI_TIMEOUT);
    popup.on('pageerror', (error) => pageErrors.push(error.message));
    await setHubPort(popup, (hub.address() as AddressInfo).port, UI_TIMEOUT);
    await pairInSettings(popup, CODE, UI_TIMEOUT);
    // The history is stored once the History lists the last question filed.
    await popup.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'History' }).click();
    await popup.getByRole('button', { name: message('rm -rf build'), exact: true }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const client of hub?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (hub ? hub.close(() => resolve()) : resolve()));
  });

  it('"Always allow…" in a review tries the rule on the history: the count, and the question the person denied flagged', async () => {
    await popup.evaluate(() => (location.hash = '#/inbox'));
    await popup.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: message('git push origin main') }).click();
    await popup.getByRole('heading', { name: message('git push origin main') }).waitFor();
    await popup.getByRole('button', { name: 'Always allow…' }).click();
    const editor = popup.getByRole('form', { name: 'Always allow: the rule' });
    expect(await editor.getByRole('textbox', { name: 'Command starts with' }).inputValue()).toBe('git push');
    expect(await editor.getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }).isChecked()).toBe(true);

    // Fetched with the editor (its own chunk, with the shell parser), then tried on the 10 past prompts and this one.
    const dryRun = editor.getByRole('region', { name: 'Dry run' });
    await expect.poll(() => dryRun.getByRole('status').textContent(), { timeout: UI_TIMEOUT })
      .toBe('Would have answered 4 of your last 11 questions; 1 of them the other way from you');
    const items = dryRun.getByRole('listitem');
    expect(await items.locator('code').allTextContents()).toEqual(['git push --force', 'git push origin main', 'git push origin dev', 'git push']);
    expect(await items.first().getAttribute('class')).toBe('differs');
    expect(await items.first().textContent()).toContain('You denied this; the rule would allow it');

    // Narrowed, the flagged one is no longer answered.
    await editor.getByRole('textbox', { name: 'Command starts with' }).fill('git push origin');
    await expect.poll(() => dryRun.getByRole('status').textContent(), { timeout: UI_TIMEOUT }).toBe('Would have answered 2 of your last 11 questions');
    // A wildcard the person types is marked in the pattern's preview.
    await editor.getByRole('textbox', { name: 'Matching' }).fill('git push origin *');
    expect(await editor.locator('.pattern-preview').textContent()).toBe('Matches: git push origin *');
    expect(await editor.locator('.pattern-preview mark.wildcard').allTextContents()).toEqual(['*']);
    await expect.poll(() => dryRun.getByRole('status').textContent(), { timeout: UI_TIMEOUT }).toBe('Would have answered 2 of your last 11 questions');
    await expectAccessibleInEachScheme(popup, 'the rule editor with its dry run in the popup');
    mkdirSync(ARTIFACTS, { recursive: true });
    await editor.screenshot({ path: join(ARTIFACTS, 'rule-dry-run.png') });
    await editor.getByRole('button', { name: 'Back' }).click();
    expect(ruleSaves()).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('the Rules view suggests a rule from answers given again and again; it opens prefilled, and only Save saves it', async () => {
    await popup.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Rules' }).click();
    const list = popup.getByRole('list', { name: 'Rules', exact: true });
    await expect.poll(() => list.getByRole('listitem').first().textContent(), { timeout: UI_TIMEOUT }).toContain('Answered 37 times, last 2 h ago');

    const suggestions = popup.getByRole('list', { name: 'Suggested rules' });
    const suggestion = suggestions.locator(':scope > li').filter({ hasText: 'You allowed npm test' });
    await expect.poll(() => suggestion.locator('.rule-words').textContent(), { timeout: UI_TIMEOUT }).toBe('You allowed npm test 6 times and denied it 0 times');
    await expectAccessibleInEachScheme(popup, 'the Rules view with a suggestion in the popup');
    await suggestion.getByRole('button', { name: 'Make a rule: Always allow npm test' }).click();

    const editor = suggestion.getByRole('form', { name: 'Always allow: the rule' });
    const field = (name: string) => editor.getByRole('textbox', { name }).inputValue();
    expect([await field('Tool'), await field('Command starts with'), await field('Agent'), await field('Directory')]).toEqual(['Bash', 'npm test', 'claude-code', CWD]);
    expect(await editor.getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }).isChecked()).toBe(true);
    await expect.poll(() => editor.getByRole('region', { name: 'Dry run' }).getByRole('status').textContent(), { timeout: UI_TIMEOUT })
      .toBe('Would have answered 6 of your last 11 questions');
    await suggestion.screenshot({ path: join(ARTIFACTS, 'rule-suggestion.png') });
    // Opened, and even after a while: nothing has gone to the hub.
    await popup.waitForTimeout(300);
    expect(ruleSaves()).toEqual([]);

    await editor.getByRole('button', { name: 'Save the rule' }).click();
    await popup.getByText('Rule saved.').waitFor();
    expect(ruleSaves()).toHaveLength(1);
    expect(ruleSaves()[0]!.params).toEqual({
      rule: { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test', directory: CWD }, expiresAt: expect.any(Number) },
    });
    const saved = parseParams('rule.save', ruleSaves()[0]!.params);
    expect(saved.success && saved.data.rule.expiresAt !== null && Math.round((saved.data.rule.expiresAt - Date.now()) / 86_400_000)).toBe(DEFAULT_RULE_DAYS);
    // The hub's new list has the rule, which answers those questions: the suggestion is gone, the rule listed.
    await expect.poll(() => list.getByRole('listitem').count(), { timeout: UI_TIMEOUT }).toBe(2);
    expect(await list.textContent()).toContain('Always allow Bash commands starting with "npm test" from claude-code in /home/dev/project until');
    await expect.poll(() => suggestions.count(), { timeout: UI_TIMEOUT }).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
