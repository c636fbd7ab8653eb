// The Rules view: the person's rules in words with how long each lasts, and edit, end now and delete, each sent to the
// background (which asks the hub) and answered in words; the list itself is the stored one, changed only by the hub.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { DAY_MS, HOUR_MS, defaultRuleEnd } from '../../shared/rule-draft.js';
import { DEFAULT_RULE_DAYS, describeRule, type Rule, type RuleDraft } from '../../shared/rules.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import { replaceRules } from '../../extension/db/rules-repo.js';
import type { ReviewerClient, RuleReply } from '../../kit/messages.js';
import { dateTime } from '../../kit/ui/format-time.js';
import { HistoryDetail } from '../../extension/ui/history-detail.js';
import { ruleUse } from '../../kit/ui/rule-words.js';
import { RulesView } from '../../extension/ui/rules-view.js';
import { freshDb } from './fakes.js';
import { bashPermission, permissionRow, rowFor, seed } from './review-helpers.js';

const NOW = Date.now();
const ALLOW: Rule = { id: 'rule_00000000000000a1', effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test', directory: '/p' }, createdAt: NOW - 60_000, expiresAt: null };
const DENY: Rule = { id: 'rule_00000000000000b2', effect: 'deny', match: { tool: 'Edit', pattern: '*.env' }, createdAt: NOW - 120_000, expiresAt: NOW + 3_600_000 };

function client(reply: RuleReply = { state: 'answered', ok: true }) {
  const saves: [string | undefined, RuleDraft][] = [];
  const deletes: string[] = [];
  const c: ReviewerClient = {
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

async function showRules(rules: Rule[], reply?: RuleReply, history: RequestRow[] = []) {
  const db = freshDb();
  await replaceRules(db, rules);
  await seed(db, history);
  const { c, saves, deletes } = client(reply);
  render(<RulesView db={db} client={c} />);
  await screen.findByRole('heading', { name: 'Your rules' });
  const list = rules.length > 0 ? screen.getByRole('list', { name: 'Rules' }) : document.body;
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

  it('each rule says how often it answered and when last, from the hub\'s counts', async () => {
    const used: Rule = { ...ALLOW, hits: 37, lastHitAt: Date.now() - 2 * HOUR_MS - 60_000 };
    const { list } = await showRules([used, DENY]);
    const items = within(list).getAllByRole('listitem');
    expect(items[0]!.querySelector('.rule-use')?.textContent).toBe('Answered 37 times, last 2 h ago');
    expect(items[1]!.querySelector('.rule-use')?.textContent).toBe('Not used yet');
  });

  it('a rule made with the default end shows the day it ends', async () => {
    const made: Rule = { ...ALLOW, expiresAt: defaultRuleEnd(NOW) };
    const { list } = await showRules([made]);
    expect(within(list).getByRole('listitem').textContent).toContain(`Until ${dateTime(made.expiresAt!)}`);
  });

  it('editing a rule offers to keep its end, or the default days, an hour, or until removed', async () => {
    const { list, saves } = await showRules([DENY, { ...ALLOW, id: 'rule_00000000000000c3' }]);
    fireEvent.click(within(list).getAllByRole('button', { name: /^Edit/ })[1]!);
    let ends = within(screen.getByRole('form', { name: 'Always deny: the rule' })).getByRole('group', { name: 'Ends' });
    expect(within(ends).getAllByRole('radio').map((r) => r.parentElement?.textContent?.trim())).toEqual([`Keep: ${dateTime(DENY.expiresAt!)}`, `In ${DEFAULT_RULE_DAYS} days`, 'In 1 hour', 'Until removed']);
    const before = Date.now();
    fireEvent.click(within(ends).getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }));
    fireEvent.click(screen.getByRole('button', { name: 'Save the rule' }));
    await screen.findByText('Rule saved.');
    expect(saves[0]![1].expiresAt! - before).toBeGreaterThanOrEqual(DEFAULT_RULE_DAYS * DAY_MS);
    expect(saves[0]![1].expiresAt! - Date.now()).toBeLessThanOrEqual(DEFAULT_RULE_DAYS * DAY_MS);
    // A rule until removed has no end to keep.
    await waitFor(() => expect(screen.queryByRole('form')).toBeNull());
    fireEvent.click(within(list).getAllByRole('button', { name: /^Edit/ })[0]!);
    ends = within(screen.getByRole('form', { name: 'Always allow: the rule' })).getByRole('group', { name: 'Ends' });
    expect(within(ends).getAllByRole('radio').map((r) => [r.parentElement?.textContent?.trim(), (r as HTMLInputElement).checked])).toEqual([
      [`In ${DEFAULT_RULE_DAYS} days`, false], ['In 1 hour', false], ['Until removed', true],
    ]);
  });

  it('the editor tries the rule on the history as it is edited, before anything is saved', async () => {
    const history = [
      permissionRow('el_1', 'npm test', 'allow', { at: NOW - 4000 }),
      permissionRow('el_2', 'npm test -- -u', 'deny', { at: NOW - 3000 }),
      permissionRow('el_3', 'npm run lint', 'allow', { at: NOW - 2000, request: { cwd: '/p' } }),
      permissionRow('el_4', 'npm test', 'allow', { at: NOW - 1000, request: { cwd: '/elsewhere' } }),
    ];
    const { list, saves } = await showRules([{ ...ALLOW, match: { ...ALLOW.match, directory: '/home/dev/project' } }], undefined, history);
    fireEvent.click(within(list).getByRole('button', { name: /^Edit/ }));
    const dryRun = await screen.findByRole('region', { name: 'Dry run' });
    expect(within(dryRun).getByRole('status').textContent).toBe('Would have answered 2 of your last 4 questions; 1 of them the other way from you');
    expect(within(dryRun).getAllByRole('listitem').map((li) => [li.querySelector('code')?.textContent, li.className])).toEqual([['npm test -- -u', 'differs'], ['npm test', '']]);
    fireEvent.input(screen.getByRole('textbox', { name: 'Command starts with' }), { target: { value: 'npm' } });
    fireEvent.input(screen.getByRole('textbox', { name: 'Directory' }), { target: { value: '' } });
    expect(within(dryRun).getByRole('status').textContent).toBe('Would have answered 4 of your last 4 questions; 1 of them the other way from you');
    expect(saves).toEqual([]);
  });

  it('with no hub it says nothing was changed', async () => {
    const { list } = await showRules([ALLOW], { state: 'not_connected' });
    fireEvent.click(within(list).getByRole('button', { name: /^Delete/ }));
    expect((await screen.findByRole('alert')).textContent).toBe('The hub is not connected: rules can be changed only while it is. Nothing was changed.');
  });
});

describe('how often a rule answered', () => {
  const now = 1_750_000_000_000;
  it.each<[string, Pick<Rule, 'hits' | 'lastHitAt'>, string]>([
    ['never counted', {}, 'Not used yet'],
    ['counted 0', { hits: 0 }, 'Not used yet'],
    ['once, a minute ago', { hits: 1, lastHitAt: now - 60_000 }, 'Answered once, last 1 min ago'],
    ['37 times, 2 h ago', { hits: 37, lastHitAt: now - 2 * HOUR_MS }, 'Answered 37 times, last 2 h ago'],
    ['a count without a time', { hits: 3 }, 'Answered 3 times'],
    ['days ago', { hits: 12, lastHitAt: now - 3 * DAY_MS }, 'Answered 12 times, last 3 d ago'],
  ])('%s', (_name, rule, words) => expect(ruleUse(rule, now)).toBe(words));
});

describe('rules suggested by the person\'s answers', () => {
  const fiveAllows = Array.from({ length: 5 }, (_, i) => permissionRow(`el_npm_${i}`, i % 2 ? 'npm test -- --bail' : 'npm test', 'allow', { at: NOW - 10_000 + i }));

  it('offers a rule for a command allowed 5 times and never denied; it opens the editor with it, and only Save saves it', async () => {
    const history = [...fiveAllows, permissionRow('el_ls', 'ls', 'allow'), permissionRow('el_rm', 'rm -rf x', 'deny')];
    const { saves } = await showRules([], undefined, history);
    const suggestions = await screen.findByRole('list', { name: 'Suggested rules' });
    const item = within(suggestions).getByRole('listitem');
    expect(item.querySelector('.rule-words')?.textContent).toBe('You allowed npm test 5 times and denied it 0 times');
    expect(item.querySelector('code')?.textContent).toBe('npm test');
    expect(item.textContent).toContain('Bash · from claude-code · in /home/dev/project');

    const opened = Date.now();
    fireEvent.click(within(item).getByRole('button', { name: 'Make a rule: Always allow npm test' }));
    const editor = within(item).getByRole('form', { name: 'Always allow: the rule' });
    const field = (name: string) => (within(editor).getByRole('textbox', { name }) as HTMLInputElement).value;
    expect([field('Tool'), field('Command starts with'), field('Matching'), field('Agent'), field('Directory')]).toEqual(['Bash', 'npm test', '', 'claude-code', '/home/dev/project']);
    expect((within(editor).getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }) as HTMLInputElement).checked).toBe(true);
    expect(within(editor).queryByRole('radio', { name: /^Keep/ })).toBeNull();
    expect(within(within(editor).getByRole('region', { name: 'Dry run' })).getByRole('status').textContent).toBe('Would have answered 5 of your last 7 questions');
    expect(saves).toEqual([]);

    fireEvent.click(within(editor).getByRole('button', { name: 'Save the rule' }));
    expect(await screen.findByText('Rule saved.')).toBeTruthy();
    expect(saves).toEqual([[undefined, { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test', directory: '/home/dev/project' }, expiresAt: expect.any(Number) }]]);
    expect(saves[0]![1].expiresAt! - opened).toBeGreaterThanOrEqual(DEFAULT_RULE_DAYS * DAY_MS - 60_000);
  });

  it('"Back" closes the editor and saves nothing', async () => {
    const { saves } = await showRules([], undefined, fiveAllows);
    fireEvent.click(await screen.findByRole('button', { name: 'Make a rule: Always allow npm test' }));
    fireEvent.click(screen.getByRole('button', { name: 'Back' }));
    expect(screen.queryByRole('form')).toBeNull();
    expect(saves).toEqual([]);
  });

  it('offers a deny for a command denied 5 times and never allowed', async () => {
    await showRules([], undefined, Array.from({ length: 6 }, (_, i) => permissionRow(`el_${i}`, `curl https://x/${i}`, 'deny')));
    const suggestions = await screen.findByRole('list', { name: 'Suggested rules' });
    expect(within(suggestions).getByRole('listitem').querySelector('.rule-words')?.textContent).toBe('You denied curl 6 times and allowed it 0 times');
    expect(within(suggestions).getByRole('button', { name: 'Make a rule: Always deny curl' })).toBeTruthy();
  });

  it.each<[string, RequestRow[], Rule[]]>([
    ['four allows', fiveAllows.slice(1), []],
    ['one deny among them', [...fiveAllows, permissionRow('el_no', 'npm test', 'deny')], []],
    ['answers a rule gave', fiveAllows.map((r) => ({ ...r, decidedVia: 'rule' as const })), []],
    ['a live rule already answers them', fiveAllows, [{ ...ALLOW, match: { tool: 'Bash', commandPrefix: 'npm test' } }]],
  ])('offers nothing for %s', async (_name, history, rules) => {
    const { list } = await showRules([DENY, ...rules], undefined, history);
    // The dry run of an open editor says when the history has been read: only then is "no suggestion" an answer.
    fireEvent.click(within(list).getAllByRole('button', { name: /^Edit/ }).at(-1)!);
    await waitFor(() => expect(within(screen.getByRole('region', { name: 'Dry run' })).getByRole('status').textContent).toMatch(/^Would have answered/));
    expect(screen.queryByRole('list', { name: 'Suggested rules' })).toBeNull();
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
