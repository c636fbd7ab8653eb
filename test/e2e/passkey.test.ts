// A decision signed by the person's passkey (issue 34, part 4), in real parts: the stdio MCP server started by a real
// MCP client, its hub, the built extension in Chromium, and Chromium's own WebAuthn stack with a virtual authenticator
// (CDP `WebAuthn` domain) on the extension's tab. The passkey is added in Settings, the agent asks with
// `assurance: "passkey"`, the person approves in the review, and the receipt's assertion verifies offline; a decision
// whose values were changed after the assertion is refused and decides nothing.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../server/ledger/ledger-format.js';
import { ledgerKey } from '../../server/ledger/ledger-key.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { decisionChallenge, decisionCore, decisionHash } from '../../shared/passkey.js';
import { shownHash } from '../../shared/shown-hash.js';
import { ReceiptSchema } from '../../shared/receipt.js';
import { connect, SERVER_ENTRY, type Harness } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';
import { readStoredRow } from './stored-row.js';
import { addVirtualAuthenticator, browserFound, chromiumSuite, launchExtension, pairedPopup, pairingCode, type ExtensionBrowser } from './extension-browser.js';

const UI_TIMEOUT = 15_000;

describe.skipIf(!browserFound)(chromiumSuite('passkeys end to end'), () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-e2e-passkey-'));
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  const errors: string[] = [];
  let agent: Harness;
  let browser: ExtensionBrowser;
  let tab: Page;
  let cdp: CDPSession;
  let authenticatorId: string;

  beforeAll(async () => {
    agent = await connect('v2-2025', { env });
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    browser = await launchExtension();
    const popup = await pairedPopup(browser, { port, code: () => pairingCode(env), errors, timeout: UI_TIMEOUT });
    await popup.close();
    // A tab, not the popup: WebAuthn needs the page in front with focus, and the review tab is where a ceremony runs.
    tab = await browser.context.newPage();
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`chrome-extension://${browser.extensionId}/review.html#/settings`);
    await tab.bringToFront();
    cdp = await browser.context.newCDPSession(tab);
    authenticatorId = await addVirtualAuthenticator(cdp);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const created = (result: { structuredContent?: Record<string, unknown>; isError?: boolean }) => {
    expect(result.isError).toBeFalsy();
    return result.structuredContent?.elicitationId as string;
  };
  /** An approval that needs a passkey, with one field to fill: how many replicas. */
  const askReplicas = async (message: string) =>
    created(await agent.callTool('elicit_approval', {
      message, assurance: 'passkey',
      requestedSchema: { type: 'object', properties: { replicas: { type: 'integer', title: 'Replicas' } }, required: ['replicas'] },
    }));

  it('an agent cannot ask for a passkey before the person has one: the refusal names the field', async () => {
    const refused = await agent.callTool('elicit_approval', { message: 'Too early', context: { a: 1 }, assurance: 'passkey' });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.structuredContent ?? refused.content)).toMatch(/assurance/);
  });

  it('adds a passkey in Settings, with the extension as its relying party', async () => {
    await tab.getByLabel('Name for a new passkey').fill('This laptop', { timeout: UI_TIMEOUT });
    await tab.getByRole('button', { name: 'Add a passkey' }).click();
    await tab.getByRole('status').filter({ hasText: 'Added This laptop.' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await tab.getByRole('list', { name: 'Your passkeys' }).getByText('This laptop').count()).toBe(1);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.rpId).toBe(EXTENSION_ORIGIN);
  });

  it('the person approves with the passkey: elicit_result carries an assertion over exactly those values, which audit verify checks offline', async () => {
    const message = 'Scale the API (passkey)';
    const id = await askReplicas(message);
    await tab.evaluate((hash) => (location.hash = hash), `#/review/${encodeURIComponent(id)}`);
    await tab.getByRole('note').filter({ hasText: 'Deciding this asks for one of your passkeys' }).waitFor({ timeout: UI_TIMEOUT });
    await tab.getByLabel('Replicas').fill('3');
    await tab.getByRole('button', { name: 'Approve' }).click();

    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 })).structuredContent).toEqual({ status: 'approved' });
    const result = (await agent.callTool('elicit_result', { elicitationId: id })).structuredContent ?? {};
    expect(result).toMatchObject({ decision: 'approved', values: { replicas: 3 }, decidedVia: 'extension' });
    const receipt = ReceiptSchema.parse(result.receipt);
    expect(receipt.passkey).toMatchObject({ rpId: EXTENSION_ORIGIN, origin: EXTENSION_ORIGIN, requestId: id });
    const signed = JSON.parse(Buffer.from(receipt.passkey?.clientDataJSON ?? '', 'base64url').toString('utf8')) as { type: string; origin: string };
    expect(signed).toMatchObject({ type: 'webauthn.get', origin: EXTENSION_ORIGIN });

    // The extension keeps the same receipt with the row (`request.receipt`): its history export carries it.
    const kept = await until('the receipt in the extension', async () => {
      const stored = (await tab.evaluate(readStoredRow, id)) as { receipt?: unknown } | undefined;
      return stored?.receipt;
    });
    expect(kept).toEqual(result.receipt);

    // The hub goes away (its ledger signs a checkpoint as it closes), and the receipt is checked from the files alone.
    await agent.close();
    // The review told the hub it was on the screen: the ledger says so, with the hash the extension rendered.
    const storedRow = await tab.evaluate(readStoredRow, id);
    if (!storedRow) throw new Error(`no row for ${id}`);
    const ledgerText = readdirSync(join(stateDir, 'ledger')).filter((f) => f.startsWith('segment-')).map((f) => readFileSync(join(stateDir, 'ledger', f), 'utf8')).join('');
    const shown = ledgerText.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { event: { type: string; id?: string } }).event).filter((e) => e.type === 'request.shown' && e.id === id);
    expect(shown).toEqual([{ type: 'request.shown', id, surface: 'extension', requestHash: await shownHash(storedRow) }]);
    const file = join(stateDir, 'receipt.json');
    writeFileSync(file, JSON.stringify(result));
    const verified = await runCommand(process.execPath, [SERVER_ENTRY, 'audit', 'verify', '--receipt', file], { env });
    expect(verified.stdout).toMatch(/receipt ok: .*passkey/);
    expect(verified.code).toBe(0);
    agent = await connect('v2-2025', { env });
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    await tab.locator('[data-state="connected"]').first().waitFor({ timeout: UI_TIMEOUT });
  });

  it('values changed after the assertion are refused (passkey_invalid), and the request still waits', async () => {
    const message = 'Scale the worker (passkey, tampered)';
    const id = await askReplicas(message);
    await tab.evaluate((hash) => (location.hash = hash), `#/review/${encodeURIComponent(id)}`);
    await tab.getByLabel('Replicas').waitFor({ timeout: UI_TIMEOUT });
    // The person's passkey signs 3 replicas (the challenge the review would make), and what reaches the hub says 300,
    // as a compromised page or background would send it. The hub recomputes the challenge from what it receives.
    const row = await tab.evaluate(readStoredRow, id);
    if (!row) throw new Error(`no row for ${id}`);
    const core = decisionCore(row.request, { decision: 'approved', values: { replicas: 3 } });
    if (!core.ok) throw new Error('the signed decision is invalid');
    const challenge = decisionChallenge({ hub: keyIdOf(ledgerKey(stateDir).publicKey), requestId: id, requestHash: await shownHash(row), decisionHash: decisionHash(core.core) });
    const send = async ({ elicitationId, challenge: signedOver, replicas }: { elicitationId: string; challenge: string; replicas: number }) => {
      const sendMessage = (message: unknown) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage(message);
      const bytes = (b64u: string) => Uint8Array.from(atob(b64u.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (b64u.length % 4)) % 4)), (c) => c.charCodeAt(0));
      const credential = await navigator.credentials.get({ publicKey: { challenge: bytes(signedOver), userVerification: 'required' } });
      if (!(credential instanceof PublicKeyCredential)) throw new Error('no assertion');
      return sendMessage({ type: 'decide', elicitationId, decision: 'approved', values: { replicas }, passkey: credential.toJSON() });
    };
    const tampered = await tab.evaluate(send, { elicitationId: id, challenge, replicas: 300 });
    expect(tampered).toMatchObject({ state: 'answered', ok: false, reason: 'passkey_invalid' });
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    // The same kind of assertion over the values actually sent is taken: the refusal was the values', not the passkey's.
    expect(await tab.evaluate(send, { elicitationId: id, challenge, replicas: 3 })).toMatchObject({ state: 'answered', ok: true, status: 'approved' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ values: { replicas: 3 } });
  });

  it('with "Saving a rule" in the setting, editing a rule in the Rules view asks for the passkey, which approves exactly that rule', async () => {
    // A rule to edit, saved over the extension's own paired key (as a review's "Always allow…" saves one).
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(stateDir) });
    const saved = await ext.call('rule.save', { rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test' }, expiresAt: null } });
    ext.close();
    expect(saved.result).toMatchObject({ ok: true });

    await tab.evaluate(() => (location.hash = '#/settings'));
    await tab.getByLabel('Saving a rule').check({ timeout: UI_TIMEOUT });
    await tab.getByRole('button', { name: 'Save what needs a passkey' }).click();
    await tab.getByRole('status').filter({ hasText: 'Saved.' }).waitFor({ timeout: UI_TIMEOUT });
    const before = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]?.signCount ?? 0;

    await tab.evaluate(() => (location.hash = '#/rules'));
    await tab.getByRole('button', { name: /^Edit: / }).first().click({ timeout: UI_TIMEOUT });
    await tab.getByLabel('Command starts with').fill('npm run test');
    await tab.getByRole('button', { name: 'Save the rule' }).click();
    await tab.getByText('Rule saved.').waitFor({ timeout: UI_TIMEOUT });
    // The authenticator signed once more: the approval of this save.
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0]?.signCount).toBe(before + 1);
    // What the hub holds now, as a welcome gives it.
    const reader = await ScriptedExtension.connect(port, { key: pairedKey(stateDir), hello: false });
    const { rules } = await reader.handshake();
    reader.close();
    expect(rules.map((r) => r.match.commandPrefix)).toEqual(['npm run test']);
  });

  it('a person the authenticator does not verify decides nothing, and the review says why', async () => {
    const message = 'Rotate the keys (passkey, not verified)';
    const id = created(await agent.callTool('elicit_approval', { message, context: { keys: 'all' }, assurance: 'passkey' }));
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      await tab.evaluate((hash) => (location.hash = hash), `#/review/${encodeURIComponent(id)}`);
      await tab.getByRole('button', { name: 'Approve' }).click({ timeout: UI_TIMEOUT });
      await tab.getByText(/passkey was not used|did not sign/).first().waitFor({ timeout: UI_TIMEOUT });
      expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
    expect(errors).toEqual([]);
  });
});
