// The Rules view: the person's rules in words with how long each lasts, and edit, end now and delete, each sent to the
// background (which asks the hub) and answered in words; the list itself is the stored one, changed only by the hub.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { describeRule, type Rule, type RuleDraft } from '../../shared/rules.js';
import { replaceRules } from '../../extension/db/rules-repo.js';
import type { BackgroundClient, RuleReply } from '../../extension/messages.js';
import { HistoryDetail } from '../../extension/ui/history-detail.js';
import { RulesView } from '../../extension/ui/rules-view.js';
import { freshDb } from './fakes.js';
import { bashPermission, rowFor } from './review-helpers.js';

const NOW = Date.now();
const ALLOW: Rule = { id: 'rule_00000000000000a1', effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test', directory: '/p' }, createdAt: NOW - 60_000, expiresAt: null };
const DENY: Rule = { id: 'rule_00000000000000b2', effect: 'deny', match: { tool: 'Edit', pattern: '*.env' }, createdAt: NOW - 120_000, expiresAt: NOW + 3_600_000 };

function client(reply: RuleReply = { state: 'answered', ok: true }) {
  const saves: [string | undefined, RuleDraft][] = [];
  const deletes: string[] = [];
  const c: BackgroundClient = {
    decide: vi.fn(),
    reconnect: vi.fn(() => Promise.resolve()),
    saveRule: vi.fn((id: string | undefined, rule: RuleDraft) => {
      saves.push([id, rule]);
      return Promise.resolve(reply);
    }),
    deleteRule: vi.fn((id: string) => {
      deletes.push(id);
      return Promise.resolve(reply);
    }),
  };
  return { c, saves, deletes };
}

async function showRules(rules: Rule[], reply?: RuleReply) {
  const db = freshDb();
  await replaceRules(db, rules);
  const { c, saves, deletes } = client(reply);
  render(<RulesView db={db} client={c} />);
  const list = await screen.findByRole('list', { name: 'Rules' });
  return { db, list, saves, deletes };
}

describe('the Rules view', () => {
  it('lists each rule in words, newest first, with how long it lasts', async () => {
    const { list } = await showRules([DENY, ALLOW]);
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.rule-words')?.textContent)).toEqual([
      `Allow ${describeRule(ALLOW)}`,
      `Deny ${describeRule(DENY)}`,
    ]);
    expect(items[0]!.textContent).toContain('Until removed');
    expect(items[1]!.textContent).toMatch(/Until \S/);
  });

  it('says when there are none', async () => {
    const db = freshDb();
    render(<RulesView db={db} client={client().c} />);
    expect(await screen.findByText(/No rules yet/)).toBeTruthy();
  });

  it('"End now" saves the rule with its end set to now; "Delete" deletes it; each says what happened', async () => {
    const { list, saves, deletes } = await showRules([ALLOW]);
    const before = Date.now();
    fireEvent.click(within(list).getByRole('button', { name: /^End now/ }));
    expect(await screen.findByText('Rule ended.')).toBeTruthy();
    expect(saves).toHaveLength(1);
    const [id, draft] = saves[0]!;
    expect(id).toBe(ALLOW.id);
    expect(draft).toEqual({ effect: 'allow', match: ALLOW.match, expiresAt: expect.any(Number) });
    expect(draft.expiresAt! >= before && draft.expiresAt! <= Date.now()).toBe(true);
    fireEvent.click(within(list).getByRole('button', { name: /^Delete/ }));
    expect(await screen.findByText('Rule deleted.')).toBeTruthy();
    expect(deletes).toEqual([ALLOW.id]);
  });

  it('"Edit" opens the same editor with the rule in it; what is saved is what the words say', async () => {
    const { list, saves } = await showRules([DENY]);
    fireEvent.click(within(list).getByRole('button', { name: /^Edit/ }));
    const editor = screen.getByRole('form', { name: 'Always deny: the rule' });
    expect((within(editor).getByRole('textbox', { name: 'Matching' }) as HTMLInputElement).value).toBe('*.env');
    expect((within(editor).getByRole('radio', { name: /^Keep:/ }) as HTMLInputElement).checked).toBe(true);
    fireEvent.input(within(editor).getByRole('textbox', { name: 'Matching' }), { target: { value: '*.pem' } });
    fireEvent.click(within(editor).getByRole('radio', { name: 'Until removed' }));
    const expected: RuleDraft = { effect: 'deny', match: { tool: 'Edit', pattern: '*.pem' }, expiresAt: null };
    expect(editor.textContent).toContain(describeRule(expected));
    fireEvent.click(within(editor).getByRole('button', { name: 'Save the rule' }));
    expect(await screen.findByText('Rule saved.')).toBeTruthy();
    expect(saves).toEqual([[DENY.id, expected]]);
    await waitFor(() => expect(screen.queryByRole('form')).toBeNull());
  });

  it('with no hub it says nothing was changed', async () => {
    const { list } = await showRules([ALLOW], { state: 'not_connected' });
    fireEvent.click(within(list).getByRole('button', { name: /^Delete/ }));
    expect((await screen.findByRole('alert')).textContent).toBe('The hub is not connected: rules can be changed only while it is. Nothing was changed.');
  });
});

describe('the history of a request a rule decided', () => {
  it('names the rule in words, or says it has since been removed', () => {
    const row = rowFor(bashPermission(), { status: 'approved', decidedVia: 'rule', ruleId: ALLOW.id, verdict: 'approved', outcome: { decision: 'approved', action: 'submit' } });
    const { unmount } = render(<HistoryDetail row={row} rules={new Map([[ALLOW.id, ALLOW]])} />);
    expect(screen.getByText(`Allowed by your rule: ${describeRule(ALLOW)}`, { exact: false })).toBeTruthy();
    unmount();
    render(<HistoryDetail row={{ ...row, status: 'rejected', verdict: 'rejected', outcome: { decision: 'rejected', action: 'cancel' } }} rules={new Map()} />);
    expect(screen.getByText('Denied by a rule since removed', { exact: false })).toBeTruthy();
    expect(screen.getByText('Denied')).toBeTruthy();
  });
});
