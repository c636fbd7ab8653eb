// A rule tried on past questions (the editor's dry run) and the rules repeated answers suggest (the Rules view), both
// over the history's rows as the extension reads them; and the draft a review starts from, whose pattern is literal.
import { describe, expect, it } from 'vitest';
import type { PermissionRequest } from '../../shared/permission.js';
import { DAY_MS, commandPrefixOf, defaultRuleEnd, draftMatch } from '../../shared/rule-draft.js';
import { dryRun, ruleSuggestions, type QuestionRow } from '../../shared/rule-history.js';
import { DEFAULT_RULE_DAYS, globMatches, type Rule, type RuleDraft, type RuleMatch } from '../../shared/rules.js';

const NOW = 1_750_000_000_000;

function bash(command: string, over: Partial<PermissionRequest> = {}): PermissionRequest {
  return {
    kind: 'permission', message: 'Claude Code wants to run a command', host: 'claude-code', event: 'PermissionRequest', tool: 'Bash',
    input: { command }, command, cwd: '/p', sessionId: 's-1', editable: true, suggestions: [], timeoutSeconds: 60, ...over,
  };
}

function edit(path: string, over: Partial<PermissionRequest> = {}): PermissionRequest {
  return bash('', { tool: 'Edit', command: undefined, path, input: { file_path: path, old_string: 'a', new_string: 'b' }, ...over });
}

let seq = 0;
/** A past question: `person` is the person's answer; `rule`, one of their rules answered it; `open`, nobody did. */
function q(request: PermissionRequest, answer: 'allow' | 'deny' | 'open', by: 'person' | 'rule' = 'person'): QuestionRow {
  seq += 1;
  return {
    id: `el_${seq}`, createdAt: NOW - seq * 1000, request,
    decision: answer === 'open' ? null : answer === 'allow' ? 'approved' : 'rejected',
    byRule: by === 'rule',
  };
}

const draft = (effect: 'allow' | 'deny', match: Omit<RuleMatch, 'tool'> & { tool?: string }, expiresAt: number | null = null): RuleDraft =>
  ({ effect, match: { tool: 'Bash', ...match }, expiresAt });

describe('the draft a review starts from', () => {
  it.each([
    ['npm test -- --watch=false', 'npm test'],
    ['rm -rf build', 'rm'],
    ['git status', 'git status'],
    ['  ls  ', 'ls'],
    ['python3 ./x.py', 'python3'],
    // A leading cd is where the command runs, not what it runs: the rule drafted from it must answer it.
    ['cd /home/dev/project && npm test 2>&1', 'npm test'],
    ['cd sub; cd ..; git status', 'git status'],
    ['cd /somewhere', 'cd'],
  ])('the command %j starts from %j', (command, prefix) => expect(commandPrefixOf(command)).toBe(prefix));

  it.each<[string, PermissionRequest, RuleMatch]>([
    ['a command: its first words', bash('npm test -- --bail'), { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test' }],
    ['a path with wildcard characters: escaped', edit('src/*/a?.ts'), { tool: 'Edit', agent: 'claude-code', pattern: 'src/\\*/a\\?.ts' }],
    ['a path with a backslash: escaped', edit('C:\\x\\*.ts'), { tool: 'Edit', agent: 'claude-code', pattern: 'C:\\\\x\\\\\\*.ts' }],
    ['another tool: its arguments as JSON, escaped', bash('', { tool: 'mcp__s__find', command: undefined, input: { q: 'what?*' } }), { tool: 'mcp__s__find', agent: 'claude-code', pattern: '{"q":"what\\?\\*"}' }],
    ['an empty command: the arguments instead', bash('  ', { input: { command: '  ' } }), { tool: 'Bash', agent: 'claude-code', pattern: '{"command":"  "}' }],
  ])('%s', (_name, request, match) => {
    expect(draftMatch(request)).toEqual(match);
    // Literal: the drafted pattern matches exactly the text it came from, and not a text its wildcards would have.
    if (match.pattern !== undefined) {
      const text = request.path ?? JSON.stringify(request.input);
      expect(globMatches(match.pattern, text)).toBe(true);
      if (/[*?]/.test(text)) expect(globMatches(match.pattern, text.replace(/[*?]/g, 'X'))).toBe(false);
    }
  });

  it(`ends ${DEFAULT_RULE_DAYS} days from now by default`, () => {
    expect(defaultRuleEnd(NOW)).toBe(NOW + DEFAULT_RULE_DAYS * DAY_MS);
    expect(DAY_MS).toBe(86_400_000);
  });
});

describe('dryRun', () => {
  type Case = [name: string, draft: RuleDraft, rows: QuestionRow[], answered: number[], differing: number[]];
  // Row positions (0-based) in the expectations, so each row reads next to what it must give.
  const cases: Case[] = [
    ['an allow answers the commands that start with its words, and flags those the person denied',
      draft('allow', { commandPrefix: 'npm test' }), [
        q(bash('npm test'), 'allow'),
        q(bash('npm test -- --watch'), 'deny'),
        q(bash('npm run lint'), 'allow'),
        q(bash('npm test && rm -rf /'), 'allow'),
        q(bash('npm test > out.txt'), 'allow'),
        q(bash('npm testing'), 'allow'),
      ], [0, 1], [1]],
    ['an allow answers a chain only when it covers every part',
      draft('allow', { commandPrefix: 'npm' }), [q(bash('npm test && npm run lint'), 'allow'), q(bash('npm test; ls'), 'allow')], [0], []],
    ['a deny answers wherever the program runs, and flags those the person allowed',
      draft('deny', { commandPrefix: 'rm' }), [
        q(bash('rm -rf build'), 'allow'),
        q(bash('npm test && rm -rf x'), 'deny'),
        q(bash('ls'), 'allow'),
        q(bash('echo rm'), 'allow'),
      ], [0, 1], [0]],
    ['a literal pattern matches only its own text; a wildcard the person typed matches more',
      draft('allow', { tool: 'Edit', pattern: 'src/\\*.ts' }), [q(edit('src/*.ts'), 'allow'), q(edit('src/a.ts'), 'deny')], [0], []],
    ['the wildcard the person typed',
      draft('allow', { tool: 'Edit', pattern: 'src/*.ts' }), [q(edit('src/*.ts'), 'allow'), q(edit('src/a.ts'), 'deny'), q(edit('lib/a.ts'), 'deny')], [0, 1], [1]],
    ['what a rule decided, or nobody, is answered but never flagged',
      draft('allow', { commandPrefix: 'make' }), [q(bash('make'), 'deny', 'rule'), q(bash('make all'), 'open'), q(bash('make x'), 'deny')], [0, 1, 2], [2]],
    ['another agent, tool, session or directory is not answered',
      draft('allow', { commandPrefix: 'ls', agent: 'codex', sessionId: 's-2', directory: '/p' }), [
        q(bash('ls', { host: 'codex', sessionId: 's-2' }), 'allow'),
        q(bash('ls', { sessionId: 's-2' }), 'allow'),
        q(bash('ls', { host: 'codex', sessionId: 's-1' }), 'allow'),
        q(bash('ls', { host: 'codex', sessionId: 's-2', cwd: '/q' }), 'allow'),
        q(bash('ls', { host: 'codex', sessionId: 's-2', tool: 'exec_command' }), 'allow'),
      ], [0], []],
    ['a rule that has ended is still tried: the dry run asks what it answers, not whether it is alive',
      draft('deny', { commandPrefix: 'curl' }, NOW - 1), [q(bash('curl example.com'), 'allow')], [0], [0]],
    ['no rows: nothing answered', draft('allow', { commandPrefix: 'ls' }), [], [], []],
  ];
  it.each(cases)('%s', (_name, d, rows, answered, differing) => {
    const result = dryRun(d, rows, NOW);
    expect(result.asked).toBe(rows.length);
    expect(result.answered.map((a) => a.id)).toEqual(answered.map((i) => rows[i]!.id));
    expect(result.answered.filter((a) => a.differs).map((a) => a.id)).toEqual(differing.map((i) => rows[i]!.id));
    expect(result.differing).toBe(differing.length);
  });

  it('says what each answered question was and who had answered it', () => {
    const rows = [q(bash("make '<b>x</b>'"), 'deny'), q(bash('make y'), 'allow', 'rule'), q(edit('a.ts'), 'allow')];
    const result = dryRun(draft('allow', { commandPrefix: 'make' }), rows, NOW);
    expect(result.answered).toEqual([
      { id: rows[0]!.id, createdAt: rows[0]!.createdAt, text: "make '<b>x</b>'", person: 'rejected', byRule: false, differs: true },
      { id: rows[1]!.id, createdAt: rows[1]!.createdAt, text: 'make y', person: null, byRule: true, differs: false },
    ]);
    expect(dryRun(draft('allow', { tool: 'Edit', pattern: '*.ts' }), rows, NOW).answered.map((a) => a.text)).toEqual(['a.ts']);
  });

  it('tries 500 questions again and again quickly (each command is parsed once)', () => {
    const rows = Array.from({ length: 500 }, (_, i) => q(bash(`npm test -- --shard=${i} && echo done | tee log-${i}.txt`), i % 7 ? 'allow' : 'deny'));
    dryRun(draft('allow', { commandPrefix: 'npm' }), rows, NOW);
    const started = performance.now();
    for (let i = 0; i < 20; i++) dryRun(draft('deny', { commandPrefix: `tee log-${i}` }), rows, NOW);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('ruleSuggestions', () => {
  const times = (n: number, make: (i: number) => QuestionRow) => Array.from({ length: n }, (_, i) => make(i));
  const rule = (effect: 'allow' | 'deny', match: RuleMatch, expiresAt: number | null = null): Rule =>
    ({ id: 'rule_00000000000000a1', effect, match, createdAt: NOW - DAY_MS, expiresAt });
  const end = defaultRuleEnd(NOW);

  type Case = [name: string, rows: QuestionRow[], rules: Rule[], expected: { subject: string; draft: RuleDraft; allowed: number; denied: number }[]];
  const cases: Case[] = [
    ['five allows of one command in one project: allow it there, for the default days',
      times(5, (i) => q(bash(`npm test -- --shard=${i}`), 'allow')), [],
      [{ subject: 'npm test', draft: { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test', directory: '/p' }, expiresAt: end }, allowed: 5, denied: 0 }]],
    ['four are not enough', times(4, () => q(bash('npm test'), 'allow')), [], []],
    ['one deny among the allows: no suggestion', [...times(5, () => q(bash('npm test'), 'allow')), q(bash('npm test -- -u'), 'deny')], [], []],
    ['five denies: deny it',
      times(5, (i) => q(bash(`rm -rf build${i}`), 'deny')), [],
      [{ subject: 'rm', draft: { effect: 'deny', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'rm', directory: '/p' }, expiresAt: end }, allowed: 0, denied: 5 }]],
    ['a rule\'s answers are not the person\'s', [...times(3, () => q(bash('ls'), 'allow')), ...times(3, () => q(bash('ls'), 'allow', 'rule'))], [], []],
    ['unanswered questions do not count', [...times(4, () => q(bash('ls'), 'allow')), ...times(3, () => q(bash('ls'), 'open'))], [], []],
    ['another agent is another group', [...times(3, () => q(bash('ls'), 'allow')), ...times(3, () => q(bash('ls', { host: 'codex' }), 'allow'))], [], []],
    ['asked in several projects: no directory',
      times(5, (i) => q(bash('make', { cwd: `/p${i % 2}` }), 'allow')), [],
      [{ subject: 'make', draft: { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'make' }, expiresAt: end }, allowed: 5, denied: 0 }]],
    ['a path: its pattern escaped, its subject as the agent wrote it',
      times(5, () => q(edit('/p/src/*.ts'), 'allow')), [],
      [{ subject: '/p/src/*.ts', draft: { effect: 'allow', match: { tool: 'Edit', agent: 'claude-code', pattern: '/p/src/\\*.ts', directory: '/p' }, expiresAt: end }, allowed: 5, denied: 0 }]],
    ['chains its words do not cover are not counted: the rule would not have answered them',
      times(5, () => q(bash('npm test && rm -rf x'), 'allow')), [], []],
    ['a live rule that already answers them: nothing to suggest',
      times(5, () => q(bash('npm test'), 'allow')), [rule('allow', { tool: 'Bash', commandPrefix: 'npm' })], []],
    ['a live deny answers them too (the other way): nothing to suggest',
      times(5, () => q(bash('npm test'), 'allow')), [rule('deny', { tool: 'Bash', commandPrefix: 'npm' })], []],
    ['a rule that has ended answers nothing: suggested again',
      times(5, () => q(bash('npm test'), 'allow')), [rule('allow', { tool: 'Bash', commandPrefix: 'npm test' }, NOW - 1)],
      [{ subject: 'npm test', draft: { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test', directory: '/p' }, expiresAt: end }, allowed: 5, denied: 0 }]],
    ['a rule that answers only some of them: still suggested',
      times(6, (i) => q(bash('npm test', { cwd: i < 3 ? '/p' : '/q' }), 'allow')), [rule('allow', { tool: 'Bash', commandPrefix: 'npm test', directory: '/p' })],
      [{ subject: 'npm test', draft: { effect: 'allow', match: { tool: 'Bash', agent: 'claude-code', commandPrefix: 'npm test' }, expiresAt: end }, allowed: 6, denied: 0 }]],
  ];
  it.each(cases)('%s', (_name, rows, rules, expected) => {
    expect(ruleSuggestions(rows, rules, NOW).map(({ subject, draft: d, allowed, denied }) => ({ subject, draft: d, allowed, denied }))).toEqual(expected);
  });

  it('most answers first, each group once, with a key of its own', () => {
    const rows = [...times(5, () => q(bash('ls'), 'allow')), ...times(7, () => q(bash('git status'), 'allow')), ...times(6, () => q(bash('rm -f x'), 'deny'))];
    const found = ruleSuggestions(rows, [], NOW);
    expect(found.map((s) => [s.subject, s.allowed + s.denied])).toEqual([['git status', 7], ['rm', 6], ['ls', 5]]);
    expect(new Set(found.map((s) => s.key)).size).toBe(3);
  });
});
