// A rule tried on the person's history before it is saved: the read of the newest permission prompts (one index
// range, newest first, each row's request and who decided it), and the dry run as the editor shows it — the count, the
// list as text, and the questions it would have answered the other way from the person, flagged and listed first.
import { render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import type { QuestionRow } from '../../shared/rule-history.js';
import type { RuleDraft } from '../../shared/rules.js';
import { recentQuestions } from '../../extension/db/question-history.js';
import { DRY_RUN_SHOWN, DryRunView, RuleDryRun } from '../../extension/ui/rule-dry-run.js';
import { freshDb, jsonApprovalRow } from './fakes.js';
import { bashPermission, confirmAsk, permissionRow, rowFor, seed } from './review-helpers.js';

const NOW = Date.now();

const allowNpmTest: RuleDraft = { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test' }, expiresAt: null };

describe('the read of the history a rule is tried on', () => {
  it('is the newest permission prompts only, newest first, at most the limit, each with who decided it', async () => {
    const db = freshDb();
    await seed(db, [
      permissionRow('el_old', 'npm test', 'allow', { at: NOW - 5000 }),
      permissionRow('el_ruled', 'npm test', 'deny', { at: NOW - 4000, byRule: true }),
      permissionRow('el_open', 'ls', 'open', { at: NOW - 3000 }),
      permissionRow('el_new', 'rm -rf x', 'deny', { at: NOW - 1000 }),
      rowFor(confirmAsk('Deploy?'), { elicitationId: 'el_confirm', createdAt: NOW }),
      jsonApprovalRow('el_approval', NOW),
    ]);
    const rows = await recentQuestions(db);
    expect(rows.map((r) => [r.id, r.decision, r.byRule])).toEqual([
      ['el_new', 'rejected', false],
      ['el_open', null, false],
      ['el_ruled', 'rejected', true],
      ['el_old', 'approved', false],
    ]);
    expect(rows[0]!.request).toMatchObject({ kind: 'permission', tool: 'Bash', command: 'rm -rf x', cwd: '/home/dev/project', host: 'claude-code', sessionId: 'sess-42' });
    expect((await recentQuestions(db, 2)).map((r) => r.id)).toEqual(['el_new', 'el_open']);
  });

  it('reads the last 500 of many, by the kind index (never the whole table)', async () => {
    const db = freshDb();
    await seed(db, Array.from({ length: 520 }, (_, i) => permissionRow(`el_${String(i).padStart(4, '0')}`, `echo ${i}`, 'allow', { at: NOW - 1_000_000 + i })));
    const rows = await recentQuestions(db);
    expect(rows).toHaveLength(500);
    expect(rows[0]!.id).toBe('el_0519');
    expect(rows.at(-1)!.id).toBe('el_0020');
  });
});

function question(id: string, command: string, decision: 'approved' | 'rejected' | null, byRule = false, createdAt = NOW): QuestionRow {
  return { id, createdAt, request: bashPermission({ command, input: { command } }), decision, byRule };
}

describe('the dry run in the editor', () => {
  it('says how many it would have answered of how many, lists them as text, and flags the other way first', () => {
    const rows = [
      question('a', 'npm test', 'approved'),
      question('b', "npm test '<img src=x onerror=alert(1)>'", 'approved'),
      question('c', 'npm run lint', 'rejected'),
      question('d', 'npm test -- -u', 'rejected'),
      question('e', 'npm test', 'rejected', true),
      question('f', 'npm test', null),
    ];
    render(<DryRunView rows={rows} draft={allowNpmTest} />);
    const section = screen.getByRole('region', { name: 'Dry run' });
    expect(within(section).getByRole('status').textContent).toBe('Would have answered 5 of your last 6 questions; 1 of them the other way from you');
    const items = within(section).getAllByRole('listitem');
    expect(items.map((li) => [li.querySelector('code')?.textContent, li.className])).toEqual([
      ['npm test -- -u', 'differs'],
      ['npm test', ''],
      ["npm test '<img src=x onerror=alert(1)>'", ''],
      ['npm test', ''],
      ['npm test', ''],
    ]);
    expect(items[0]!.textContent).toContain('You denied this; the rule would allow it');
    expect(items.map((li) => li.querySelector('span')?.textContent?.split(' · ')[0])).toEqual([
      'You denied this; the rule would allow it', 'You allowed it', 'You allowed it', 'Answered by one of your rules', 'Not answered',
    ]);
    expect(document.querySelector('img')).toBeNull();
  });

  it('a deny flags what the person allowed', () => {
    render(<DryRunView rows={[question('a', 'rm -rf build', 'approved'), question('b', 'ls && rm x', 'rejected')]} draft={{ effect: 'deny', match: { tool: 'Bash', commandPrefix: 'rm' }, expiresAt: null }} />);
    expect(screen.getByRole('status').textContent).toBe('Would have answered 2 of your last 2 questions; 1 of them the other way from you');
    expect(screen.getAllByRole('listitem')[0]!.textContent).toContain('You allowed this; the rule would deny it');
  });

  it(`lists the first ${DRY_RUN_SHOWN} and says how many more; long commands are cut`, () => {
    const rows = Array.from({ length: 30 }, (_, i) => question(`q${i}`, `npm test ${'x'.repeat(i === 0 ? 500 : 1)}`, 'approved'));
    render(<DryRunView rows={rows} draft={allowNpmTest} />);
    expect(screen.getAllByRole('listitem')).toHaveLength(DRY_RUN_SHOWN);
    expect(screen.getByText('and 10 more')).toBeTruthy();
    expect(screen.getAllByRole('listitem')[0]!.querySelector('code')?.textContent).toBe(`npm test ${'x'.repeat(191)}…`);
  });

  it('says when nothing would have been answered, when there is no history, while reading, and when the read failed', () => {
    const { rerender } = render(<DryRunView rows={[question('a', 'ls', 'approved')]} draft={allowNpmTest} />);
    expect(screen.getByRole('status').textContent).toBe('Would have answered 0 of your last 1 question');
    expect(screen.queryByRole('list')).toBeNull();
    rerender(<DryRunView rows={[]} draft={allowNpmTest} />);
    expect(screen.getByText('No permission prompts in your history yet to try this rule on.')).toBeTruthy();
    rerender(<DryRunView rows={undefined} draft={allowNpmTest} />);
    expect(screen.getByRole('status').textContent).toBe('Trying the rule on your history…');
    rerender(<DryRunView rows={null} draft={allowNpmTest} />);
    expect(screen.getByText('Your history could not be read, so this rule was not tried on it.')).toBeTruthy();
  });

  it('reads the history from the database itself (the review\'s dry run)', async () => {
    const db = freshDb();
    await seed(db, [permissionRow('el_1', 'npm test', 'deny', { at: NOW - 2000 }), permissionRow('el_2', 'npm test -- -u', 'allow', { at: NOW - 1000 }), permissionRow('el_3', 'ls', 'allow')]);
    render(<RuleDryRun db={db} draft={allowNpmTest} />);
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Would have answered 2 of your last 3 questions; 1 of them the other way from you'));
    expect(screen.getAllByRole('listitem').map((li) => [li.querySelector('code')?.textContent, li.className])).toEqual([['npm test', 'differs'], ['npm test -- -u', '']]);
  });
});
