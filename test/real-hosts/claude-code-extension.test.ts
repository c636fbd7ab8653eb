import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserFound, chromiumSuite, launchExtension, pairedPopup, pairingCode, type ExtensionBrowser } from '../e2e/extension-browser.js';
import { claudeEnv, claudePrint, claudeSandbox, hookCalls, type ClaudePrint, type ClaudeSandbox } from './claude-print.js';
import { RunningHub, hooksInstall } from './companion.js';
import { CLAUDE, hostSuite } from './host-bins.js';
import { MockMessagesApi, type MessagesTurn } from './mock-messages-api.js';

// The real Claude Code (`claude -p`, played by the mock Messages API, with the hooks `hooks install claude-code --scope
// project` writes) meets the real extension in headless Chromium: its permission prompt reaches the popup, a person
// clicks there (by the accessible names a person's screen reader hears), and what they click is what the host does.
// The scripted-extension suite (claude-code-hooks.test.ts) covers the hook's shapes; this one proves the whole path.

const UI_TIMEOUT = 15_000;
/** The hook waits up to 110 s for the person; here the person answers as soon as the review shows. */
const PROMPT_TIMEOUT = 60_000;
const MESSAGE = 'Claude Code wants to run a command';

const bash = (command: string): MessagesTurn => ({ toolUse: { name: 'Bash', input: { command, description: 'write a file' } } });

const title = hostSuite(chromiumSuite("Claude Code's own permission prompts answered in the real extension"), CLAUDE);

describe.skipIf(!CLAUDE.found || !browserFound)(title, () => {
  let sandbox: ClaudeSandbox;
  let hub: RunningHub;
  let browser: ExtensionBrowser;
  let popup: Page;
  const pageErrors: string[] = [];
  const closers: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    sandbox = claudeSandbox();
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    await hooksInstall('claude-code', ['--scope', 'project'], { cwd: sandbox.work, env: { HOME: sandbox.home, CLAUDE_CONFIG_DIR: sandbox.config } });
    browser = await launchExtension();
    popup = await pairedPopup(browser, { port: hub.port, code: () => pairingCode(hub.env), errors: pageErrors, timeout: UI_TIMEOUT });
    popup.setDefaultTimeout(UI_TIMEOUT);
  }, 90_000);

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.stop();
    sandbox?.remove();
  });

  async function mockModel(turns: MessagesTurn[]): Promise<MockMessagesApi> {
    const api = await MockMessagesApi.start(turns);
    closers.push(() => api.close());
    return api;
  }

  function claude(api: MockMessagesApi): Promise<ClaudePrint> {
    return claudePrint(CLAUDE.bin, sandbox, claudeEnv(sandbox, api.url, hub.env), ['--include-hook-events']);
  }

  function report(name: string, run: ClaudePrint): void {
    const hooks = hookCalls(run).map((h) => `${h.event} hook ${h.ms} ms`);
    console.log(`real-hosts: claude -p + real extension, ${name}: run ${run.ms} ms${hooks.length ? `; ${hooks.join(', ')}` : ''}`);
  }

  /**
   * Waits, in the popup's inbox, for the host's prompt and opens it as a person would; checks the command shown is the
   * one the model asked to run. A run that ends before the prompt shows fails the test with its own output.
   */
  async function openPrompt(command: string, running: Promise<ClaudePrint>): Promise<void> {
    await popup.evaluate(() => (location.hash = '#/inbox'));
    const item = popup.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: MESSAGE });
    const ended = running.then((run) => {
      throw new Error(`claude ended before its prompt reached the popup (code ${run.code}): ${run.stdout.slice(-2000)}${run.stderr}`);
    });
    await Promise.race([item.click({ timeout: PROMPT_TIMEOUT }), ended]);
    await popup.getByRole('heading', { name: MESSAGE }).waitFor();
    expect(await popup.getByLabel('Command', { exact: true }).textContent()).toBe(command);
  }

  /** Decided, the review goes back to the inbox; a person's next step starts from there (not before it, or that return undoes it). */
  async function backInInbox(): Promise<void> {
    await popup.waitForURL(/#\/inbox$/, { timeout: UI_TIMEOUT });
  }

  async function nav(section: 'Inbox' | 'History' | 'Rules'): Promise<void> {
    await popup.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section }).click();
  }

  it('"Allow once" in the popup: the Bash write runs, and the model sees its result', async () => {
    const api = await mockModel([bash('touch approved.txt'), { echo: true }]);
    const running = claude(api);
    await openPrompt('touch approved.txt', running);
    await popup.getByRole('button', { name: 'Allow once' }).click();
    await backInInbox();
    const run = await running;
    report('allow once', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: false })]);
    // Then the tool ran, and its PostToolUse hook found no prompt waiting: its guard ended it before Node started.
    expect(hookCalls(run)).toEqual([expect.objectContaining({ event: 'PermissionRequest', exitCode: 0 }), expect.objectContaining({ event: 'PostToolUse', exitCode: 0, stdout: '' })]);
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('"Deny" with a reason in the popup: the Bash write does not run, and the model sees the reason', async () => {
    const reason = 'not on a Friday: use the staging folder';
    const api = await mockModel([bash('touch denied.txt'), { echo: true }]);
    const running = claude(api);
    await openPrompt('touch denied.txt', running);
    await popup.getByRole('textbox', { name: 'Reason if you deny (optional, the agent is told)' }).fill(reason);
    await popup.getByRole('button', { name: 'Deny', exact: true }).click();
    await backInInbox();
    const run = await running;
    report('deny with a reason', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: true, text: expect.stringContaining(reason) })]);
    expect(run.result?.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })]);
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('"Always allow…" for this project saves the rule; a new run\'s matching command is decided by it, never asked', async () => {
    // A rule made in a review ends after the default days (issue 33): its words end with that date.
    const words = `Always allow Bash commands starting with "touch" from claude-code in ${sandbox.work} until`;
    const first = await mockModel([bash('touch first.txt'), { echo: true }]);
    const runningFirst = claude(first);
    await openPrompt('touch first.txt', runningFirst);
    await popup.getByRole('button', { name: 'Always allow…' }).click();
    const editor = popup.getByRole('form', { name: 'Always allow: the rule' });
    await popup.getByRole('radio', { name: 'This project' }).check();
    expect(await editor.textContent()).toContain(`The rule: ${words}`);
    await editor.getByRole('button', { name: 'Allow and save the rule' }).click();
    await backInInbox();
    const firstRun = await runningFirst;
    report('always allow, the decision that saves the rule', firstRun);
    expect(firstRun.code, firstRun.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);
    await nav('Rules');
    await expect.poll(() => popup.getByRole('list', { name: 'Rules' }).textContent(), { timeout: UI_TIMEOUT }).toContain(words);

    // A new claude run (a new session: the host's own session permissions cannot be what allows it). The popup stays
    // on the inbox throughout: every request that becomes pending while the run lasts is counted.
    await nav('Inbox');
    await popup.getByText('Nothing to review.').waitFor();
    await popup.evaluate(() => {
      const seen: string[] = [];
      Object.assign(window, { pendingSeen: seen });
      new MutationObserver(() => {
        document.querySelectorAll('ul[aria-label="Pending requests"] .inbox-item').forEach((item) => seen.push(item.textContent ?? ''));
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    const second = await mockModel([bash('touch second.txt'), { echo: true }]);
    const run = await claude(second);
    report('always allow, the command the rule decides', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'second.txt'))).toBe(true);
    expect(second.toolResults).toEqual([expect.objectContaining({ isError: false })]);
    expect(hookCalls(run)).toEqual([
      expect.objectContaining({ event: 'PermissionRequest', exitCode: 0, stdout: expect.stringContaining('"allow"') }),
      expect.objectContaining({ event: 'PostToolUse', exitCode: 0, stdout: '' }),
    ]);
    expect(await popup.evaluate(() => (window as Window & { pendingSeen?: string[] }).pendingSeen)).toEqual([]);
    await popup.getByText('Nothing to review.').waitFor();

    // The history names the rule that decided it.
    await nav('History');
    const history = popup.getByRole('table', { name: 'History' });
    await expect.poll(() => history.textContent(), { timeout: UI_TIMEOUT }).toContain(`Allowed by your rule: ${words}`);
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
