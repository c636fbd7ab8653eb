// --auto: the requests are decided through the real review page, found by accessible names the way a person (or a
// screen reader) finds things, with a screenshot of each before it is decided.
/* global location -- page.evaluate bodies run in the extension's page */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { UI_TIMEOUT } from '../lib/extension-browser.mjs';
import { AUTO_CHOICES } from './requests.mjs';

/** Polls `check` (a read of the page) until it holds: UI state settles a render after the action that changed it. */
async function until(what, check, timeout = UI_TIMEOUT) {
  const end = Date.now() + timeout;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what} did not happen within ${timeout / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Decides the three `filed` requests (from the agent: key, message) in `page`, which shows the inbox. `step(name)`
 * names what is being done, so a failure says where it failed. Returns the screenshots' paths.
 */
export async function decideAutomatically(page, filed, { outDir, step }) {
  mkdirSync(outDir, { recursive: true });
  const shots = [];
  const shoot = async (name) => {
    const path = join(outDir, name);
    // The app's own box, not the whole viewport: no empty band under a short review.
    await page.locator('.app').screenshot({ path, animations: 'disabled', caret: 'hide' });
    shots.push(path);
  };
  const message = (key) => filed.find((r) => r.key === key).message;
  const inboxItem = (key) => page.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: message(key) });
  const open = async (key) => {
    if (!page.url().endsWith('#/inbox')) await page.evaluate(() => (location.hash = '#/inbox'));
    await inboxItem(key).click();
  };
  // Decided, a review goes back to the inbox (a decision the hub did not take would stay on the review and say why).
  const backInInbox = () => page.waitForURL(/#\/inbox$/);

  step('the inbox lists the three requests');
  for (const { key } of filed) await inboxItem(key).waitFor();
  await shoot('inbox.png');

  {
    const choose = AUTO_CHOICES.proposal;
    step('NorthMark proposal: open it from the inbox');
    await open('proposal');
    const grid = page.getByRole('table', { name: 'Proposed changes' });
    await grid.waitFor();
    step(`NorthMark proposal: type ${choose.editValue} in "${choose.editLabel}"`);
    await page.getByLabel(choose.editLabel).fill(choose.editValue);
    step(`NorthMark proposal: double-click the "${choose.copyCell}" cell`);
    const cell = page.getByRole('cell', { name: choose.copyCell });
    const copied = (await cell.textContent())?.trim();
    await cell.dblclick();
    await until(`"Proposed Name" showing the copied "${copied}"`, async () => (await page.getByLabel('Proposed Name').inputValue()) === copied);
    step(`NorthMark proposal: untick "${choose.untick}"`);
    await page.getByRole('checkbox', { name: choose.untick }).uncheck();
    await page.getByText('3 of 4 included').waitFor();
    await shoot('proposal-review.png');
    step('NorthMark proposal: Submit Changes');
    await page.getByRole('button', { name: 'Submit Changes' }).click();
    await backInInbox();
  }

  {
    step('deploy approval: open it from the inbox');
    await open('deploy');
    // The template's table is what the person reads before deciding.
    await page.getByRole('cell', { name: '10% of traffic for 15 minutes' }).waitFor();
    step('deploy approval: comment and Deploy');
    await page.getByLabel('Comment (optional)').fill(AUTO_CHOICES.deploy.comment);
    await shoot('deploy-approval.png');
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await backInInbox();
  }

  {
    const fill = AUTO_CHOICES.releaseNote;
    step('release note: open it from the inbox');
    await open('release-note');
    step('release note: fill the form and Approve');
    await page.getByLabel('Release note').fill(fill.note);
    if (fill.emailCustomers) await page.getByLabel('Email customers about this release').check();
    await shoot('release-note-form.png');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await backInInbox();
  }

  step('the inbox is empty');
  await page.getByText('Nothing to review.').waitFor();
  return shots;
}
