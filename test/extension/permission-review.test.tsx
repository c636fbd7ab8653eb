// A host's own permission prompt in the review: what is shown (text, never markup), what each button sends, editing
// before allowing (what is in the editor is what is sent), a deny's reason, and "Always allow…"/"Always deny…" whose
// rule is prefilled, editable, said in words, and sent with the decision.
import { fireEvent, render, screen, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import type { PermissionRequest } from '../../shared/permission.js';
import { shownHash } from '../../shared/shown-hash.js';
import { DAY_MS } from '../../shared/rule-draft.js';
import { DEFAULT_RULE_DAYS, describeRule } from '../../shared/rules.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import { PermissionRuleEditor } from '../../extension/ui/permission-rule-editor.js';
import { ReviewView } from '../../kit/ui/review/review-view.js';
import { RequestDetail } from '../../kit/ui/review/request-detail.js';
import { bashPermission, descriptions, fakeClient, rowFor } from './review-helpers.js';

function show(request: PermissionRequest, extra: Partial<RequestRow> = {}, rules = true) {
  const { client, calls } = fakeClient();
  const onDone = vi.fn();
  // `rules`: shown by the extension, whose decisions can carry a rule (the chat's and the phone's cannot).
  const row = rowFor(request, extra);
  render(<ReviewView row={row} decide={client.decide} {...(rules ? { ruleEditor: (slot) => <PermissionRuleEditor {...slot} /> } : {})} onDone={onDone} />);
  // Every decision carries the hash of the row the review renders: the hub refuses one that is not its request.
  return { calls, onDone, shown: shownHash(row) };
}

const button = (name: string) => screen.getByRole('button', { name });
const sent = () => screen.findByText('Decision sent.');

describe('a permission review', () => {
  it('names the host as the request does: a host the surfaces were never told of shows its own name, as text', () => {
    show(bashPermission({ host: 'gemini-cli', hostName: 'Gemini <b>CLI</b>', event: 'BeforeTool', editable: false, message: 'Gemini <b>CLI</b> wants to run a command' }));
    const facts = screen.getByLabelText('Permission');
    expect(within(facts).getByText('Gemini <b>CLI</b>')).toBeTruthy();
    expect(screen.getByText(/runs the command only as it is here/).textContent).toMatch(/^Gemini <b>CLI<\/b> runs the command only as it is here/);
    expect(document.querySelector('b')).toBeNull();
  });

  it('shows the message, the tool, the command as text in a <pre>, the directory and the session', () => {
    show(bashPermission({ command: '<img src=x onerror=alert(1)> && echo hi', input: { command: '<img src=x onerror=alert(1)> && echo hi' } }));
    expect(screen.getByRole('heading', { name: 'Claude Code wants to run a command' })).toBeTruthy();
    const facts = screen.getByLabelText('Permission');
    expect(within(facts).getByText('Bash')).toBeTruthy();
    expect(within(facts).getByText('/home/dev/project')).toBeTruthy();
    expect(within(facts).getByText('sess-42')).toBeTruthy();
    const command = screen.getByLabelText('Command');
    expect(command.tagName).toBe('PRE');
    expect(command.textContent).toBe('<img src=x onerror=alert(1)> && echo hi');
    expect(document.querySelector('img')).toBeNull();
  });

  it('shows an edit as diff lines, added and removed marked, as text', () => {
    show(bashPermission({
      message: 'Claude Code wants to edit a file', tool: 'Edit', command: undefined, path: 'src/a.ts',
      input: { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' },
      diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-const a = 1;\n+const a = <b>2</b>;\n',
    }));
    const diff = screen.getByLabelText('Changes');
    const lines = Array.from(diff.querySelectorAll('span')).map((s) => [s.className, s.textContent]);
    expect(lines).toEqual([
      ['diff-file', '--- a/src/a.ts\n'], ['diff-file', '+++ b/src/a.ts\n'], ['diff-hunk', '@@ -1 +1 @@\n'],
      ['diff-del', '-const a = 1;\n'], ['diff-add', '+const a = <b>2</b>;\n'],
    ]);
    expect(diff.querySelector('b')).toBeNull();
  });

  it("shows another MCP server's tool and its arguments as JSON text", () => {
    show(bashPermission({
      message: "Claude Code wants to use github's create_issue", tool: 'mcp__github__create_issue', command: undefined,
      mcp: { server: 'github', tool: 'create_issue' }, input: { title: 'Bug', labels: ['p1'] },
    }));
    expect(screen.getByLabelText('Permission').textContent).toContain('MCP servergithub · tool create_issue');
    expect(screen.getByLabelText('Arguments').textContent).toBe(JSON.stringify({ title: 'Bug', labels: ['p1'] }, null, 2));
  });

  it('"Allow once" allows as shown, with no edited input', async () => {
    const { calls, onDone, shown } = show(bashPermission());
    expect(descriptions(button('Allow once'))).toEqual(['runs the command as shown, this time only']);
    fireEvent.click(button('Allow once'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', shownHash: await shown }]);
    expect(onDone).toHaveBeenCalledTimes(1);
  });

  it('an edited command is sent exactly as it stands in the editor, with the rest of the input', async () => {
    const { calls, shown } = show(bashPermission());
    fireEvent.click(button('Edit before allowing'));
    const editor = screen.getByRole('textbox', { name: 'Command to run' });
    expect((editor as HTMLTextAreaElement).value).toBe('npm test -- --watch=false');
    fireEvent.input(editor, { target: { value: 'npm test -- --watch=false --bail' } });
    expect(descriptions(button('Allow once'))).toEqual(['runs the command as edited above, this time only']);
    fireEvent.click(button('Allow once'));
    await sent();
    expect(calls).toEqual([{
      elicitationId: 'el-1', decision: 'approved',
      values: { updatedInput: { command: 'npm test -- --watch=false --bail', description: 'Run the tests' } },
      // The hash is of the request as shown, not of the edited input: the edit is the person's answer.
      shownHash: await shown,
    }]);
  });

  it('opening the editor leaves the reason box as it was and gives the editor no length limit', () => {
    show(bashPermission());
    const reason = screen.getByRole('textbox', { name: 'Reason if you deny (optional, the agent is told)' });
    fireEvent.click(button('Edit before allowing'));
    const editor = screen.getByRole('textbox', { name: 'Command to run' });
    // Reusing the reason's element for the editor once dropped its maxLength to 0 in Chromium: nothing could be typed.
    expect(editor).not.toBe(reason);
    expect(editor.hasAttribute('maxlength')).toBe(false);
    expect(screen.getByRole('textbox', { name: 'Reason if you deny (optional, the agent is told)' })).toBe(reason);
    expect(reason.getAttribute('maxlength')).toBe('4000');
  });

  it('an edited JSON input that does not parse sends nothing and says why', () => {
    const { calls } = show(bashPermission({ tool: 'mcp__x__y', command: undefined, mcp: { server: 'x', tool: 'y' }, input: { a: 1 } }));
    fireEvent.click(button('Edit before allowing'));
    fireEvent.input(screen.getByRole('textbox', { name: 'Input to run (JSON)' }), { target: { value: '{"a": 2' } });
    expect(screen.getByText(/The input is not JSON/)).toBeTruthy();
    expect((button('Allow once') as HTMLButtonElement).disabled).toBe(true);
    expect(calls).toEqual([]);
  });

  it('a host that runs no edited input offers no editor', () => {
    show(bashPermission({ host: 'codex', editable: false }));
    expect(screen.queryByRole('button', { name: 'Edit before allowing' })).toBeNull();
    expect(screen.queryByRole('textbox', { name: 'Command to run' })).toBeNull();
    expect(screen.getByText(/only as it is here/)).toBeTruthy();
  });

  it('Deny sends the reason as the comment the host shows the agent', async () => {
    const { calls, shown } = show(bashPermission());
    fireEvent.input(screen.getByRole('textbox', { name: 'Reason if you deny (optional, the agent is told)' }), { target: { value: '  Use the CI instead  ' } });
    fireEvent.click(button('Deny'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', comment: 'Use the CI instead', shownHash: await shown }]);
  });

  it('Ctrl+Enter sends nothing; Esc asks before denying', async () => {
    const { calls, shown } = show(bashPermission());
    fireEvent.keyDown(document.body, { key: 'Enter', ctrlKey: true });
    expect(calls).toEqual([]);
    fireEvent.keyDown(document.body, { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog', { name: 'Deny this?' })).getByRole('button', { name: 'Yes, deny' }));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', shownHash: await shown }]);
  });

  it('"Always allow…" opens the rule prefilled, said in words, editable; saving allows with exactly that rule', async () => {
    const { calls, shown } = show(bashPermission());
    const opened = Date.now();
    fireEvent.click(button('Always allow…'));
    const editor = screen.getByRole('form', { name: 'Always allow: the rule' });
    const field = (name: string) => within(editor).getByRole('textbox', { name }) as HTMLInputElement;
    expect(field('Tool').value).toBe('Bash');
    expect(field('Command starts with').value).toBe('npm test');
    expect(field('Agent').value).toBe('claude-code');
    expect(field('Directory').value).toBe('/home/dev/project');
    expect((within(editor).getByRole('radio', { name: 'This session' }) as HTMLInputElement).checked).toBe(true);
    // A new rule ends after the default days unless the person picks otherwise (issue 33).
    expect((within(editor).getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }) as HTMLInputElement).checked).toBe(true);
    expect(editor.textContent).toMatch(/The rule: Always allow Bash commands starting with "npm test" from claude-code in \/home\/dev\/project in this session only until \d{4}-\d\d-\d\dT/);

    // The person narrows it to this project (not just this session) and edits the prefix.
    fireEvent.click(within(editor).getByRole('radio', { name: 'This project' }));
    fireEvent.input(field('Command starts with'), { target: { value: 'npm test --' } });
    const words = editor.querySelector('.rule-words')?.textContent;
    fireEvent.click(within(editor).getByRole('button', { name: 'Allow and save the rule' }));
    await sent();
    const expected = { effect: 'allow' as const, match: { tool: 'Bash', commandPrefix: 'npm test --', agent: 'claude-code', directory: '/home/dev/project' }, expiresAt: expect.any(Number) };
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', rule: expected, shownHash: await shown }]);
    const rule = calls[0]!.rule!;
    expect(rule.expiresAt! - opened).toBeGreaterThanOrEqual(DEFAULT_RULE_DAYS * DAY_MS);
    expect(rule.expiresAt! - Date.now()).toBeLessThanOrEqual(DEFAULT_RULE_DAYS * DAY_MS);
    // What was saved is what the words said.
    expect(words).toBe(`The rule: ${describeRule(rule)}`);
  });

  it('"1 hour" sets the rule to end an hour from now, and the words say when', async () => {
    const { calls } = show(bashPermission());
    fireEvent.click(button('Always allow…'));
    const before = Date.now();
    fireEvent.click(screen.getByRole('radio', { name: '1 hour' }));
    expect((screen.getByRole('radio', { name: 'In 1 hour' }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Allow and save the rule' }));
    await sent();
    const expiresAt = calls[0]?.rule?.expiresAt;
    expect(typeof expiresAt).toBe('number');
    expect(expiresAt! - before).toBeGreaterThanOrEqual(3_600_000);
    expect(expiresAt! - Date.now()).toBeLessThanOrEqual(3_600_000);
  });

  it('the scope "Until removed" still means until removed; the ends can be picked apart from the scope', async () => {
    const { calls } = show(bashPermission());
    fireEvent.click(button('Always allow…'));
    const editor = screen.getByRole('form', { name: 'Always allow: the rule' });
    const ends = within(editor).getByRole('group', { name: 'Ends' });
    expect(within(ends).getAllByRole('radio').map((r) => r.parentElement?.textContent?.trim())).toEqual([`In ${DEFAULT_RULE_DAYS} days`, 'In 1 hour', 'Until removed']);
    fireEvent.click(within(within(editor).getByRole('group', { name: 'For' })).getByRole('radio', { name: 'Until removed' }));
    expect((within(ends).getByRole('radio', { name: 'Until removed' }) as HTMLInputElement).checked).toBe(true);
    expect(editor.textContent).toContain('from claude-code until removed');
    // Back to the default days, from the ends alone: the scope's directory stays as it is.
    fireEvent.click(within(ends).getByRole('radio', { name: `In ${DEFAULT_RULE_DAYS} days` }));
    fireEvent.click(within(ends).getByRole('radio', { name: 'Until removed' }));
    fireEvent.click(within(editor).getByRole('button', { name: 'Allow and save the rule' }));
    await sent();
    expect(calls[0]?.rule).toEqual({ effect: 'allow', match: { tool: 'Bash', commandPrefix: 'npm test', agent: 'claude-code' }, expiresAt: null });
  });

  it('"Always deny…" denies with the reason and a deny rule; an empty tool cannot be saved', async () => {
    const { calls, shown } = show(bashPermission({ command: 'rm -rf build', input: { command: 'rm -rf build' } }));
    fireEvent.input(screen.getByRole('textbox', { name: 'Reason if you deny (optional, the agent is told)' }), { target: { value: 'never' } });
    fireEvent.click(button('Always deny…'));
    const editor = screen.getByRole('form', { name: 'Always deny: the rule' });
    const tool = within(editor).getByRole('textbox', { name: 'Tool' });
    fireEvent.input(tool, { target: { value: '' } });
    const save = within(editor).getByRole('button', { name: 'Deny and save the rule' }) as HTMLButtonElement;
    expect(save.disabled).toBe(true);
    expect(editor.textContent).toContain('This rule cannot be saved');
    fireEvent.input(tool, { target: { value: 'Bash' } });
    fireEvent.click(save);
    await sent();
    expect(calls).toEqual([{
      elicitationId: 'el-1', decision: 'rejected', comment: 'never',
      rule: { effect: 'deny', match: { tool: 'Bash', commandPrefix: 'rm', agent: 'claude-code', directory: '/home/dev/project', sessionId: 'sess-42' }, expiresAt: expect.any(Number) },
      shownHash: await shown,
    }]);
  });

  it('a rule drafted from a path is literal: the agent\'s * and ? are escaped, and only wildcards the person types are marked', async () => {
    const { calls } = show(bashPermission({
      message: 'Claude Code wants to edit a file', tool: 'Edit', command: undefined, path: 'src/*/a?.ts',
      input: { file_path: 'src/*/a?.ts', old_string: 'a', new_string: 'b' },
    }));
    fireEvent.click(button('Always allow…'));
    const editor = screen.getByRole('form', { name: 'Always allow: the rule' });
    const matching = within(editor).getByRole('textbox', { name: 'Matching' }) as HTMLInputElement;
    expect(matching.value).toBe('src/\\*/a\\?.ts');
    expect(descriptions(matching)[0]).toBe('the file path or the arguments: * any text, ? one character, \\ makes the next one itself');
    // The preview reads the pattern as it will match: here the agent's text exactly, no wildcard.
    const preview = () => editor.querySelector('.pattern-preview')!;
    expect(preview().textContent).toBe('Matches exactly: src/*/a?.ts');
    expect(preview().querySelectorAll('mark')).toHaveLength(0);
    expect(descriptions(matching)[1]).toBe('Matches exactly: src/*/a?.ts');

    fireEvent.input(matching, { target: { value: 'src/*/a\\?.t?' } });
    expect(preview().textContent).toBe('Matches: src/*/a?.t?');
    expect(Array.from(preview().querySelectorAll('mark.wildcard'), (m) => [m.textContent, m.getAttribute('title')])).toEqual([['*', 'any text'], ['?', 'one character']]);
    fireEvent.click(within(editor).getByRole('button', { name: 'Allow and save the rule' }));
    await sent();
    expect(calls[0]?.rule?.match.pattern).toBe('src/*/a\\?.t?');
  });

  it('an agent\'s text in the pattern preview is text, never markup', () => {
    show(bashPermission({ tool: 'mcp__x__y', command: undefined, input: { html: '<img src=x onerror=alert(1)>' } }));
    fireEvent.click(button('Always allow…'));
    const preview = document.querySelector('.pattern-preview')!;
    expect(preview.textContent).toBe('Matches exactly: {"html":"<img src=x onerror=alert(1)>"}');
    expect(document.querySelector('img')).toBeNull();
  });

  it('the editor shows what a dry run says about the rule as it stands, and follows its edits', () => {
    const seen: string[] = [];
    const { client } = fakeClient();
    render(<ReviewView row={rowFor(bashPermission())} decide={client.decide} ruleEditor={(slot) => <PermissionRuleEditor {...slot} dryRun={(draft) => {
      seen.push(draft.match.commandPrefix ?? '');
      return <p>dry run of {draft.match.commandPrefix}</p>;
    }} />} />);
    fireEvent.click(button('Always allow…'));
    expect(screen.getByText('dry run of npm test')).toBeTruthy();
    fireEvent.input(screen.getByRole('textbox', { name: 'Command starts with' }), { target: { value: 'npm' } });
    expect(screen.getByText('dry run of npm')).toBeTruthy();
    // A rule that cannot be saved is not tried.
    fireEvent.input(screen.getByRole('textbox', { name: 'Tool' }), { target: { value: '' } });
    expect(screen.queryByText(/^dry run of/)).toBeNull();
    expect(seen).toContain('npm');
  });

  it('an always-allow after editing starts from the edited command and allows with it', async () => {
    const { calls } = show(bashPermission());
    fireEvent.click(button('Edit before allowing'));
    fireEvent.input(screen.getByRole('textbox', { name: 'Command to run' }), { target: { value: 'pnpm lint' } });
    fireEvent.click(button('Always allow…'));
    expect((screen.getByRole('textbox', { name: 'Command starts with' }) as HTMLInputElement).value).toBe('pnpm lint');
    fireEvent.click(screen.getByRole('button', { name: 'Allow and save the rule' }));
    await sent();
    expect(calls[0]?.values).toEqual({ updatedInput: { command: 'pnpm lint', description: 'Run the tests' } });
    expect(calls[0]?.rule?.match.commandPrefix).toBe('pnpm lint');
  });

  it('a surface that cannot carry rules (the chat) offers no "Always…"', () => {
    show(bashPermission(), {}, false);
    expect(screen.queryByRole('button', { name: 'Always allow…' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Always deny…' })).toBeNull();
    expect(button('Allow once')).toBeTruthy();
  });

  it('a request a rule decided reads as allowed by one of your rules', () => {
    render(<ReviewView row={rowFor(bashPermission(), { status: 'approved', decidedVia: 'rule', ruleId: 'rule_0123456789abcdef', outcome: { decision: 'approved' } })} decide={fakeClient().client.decide} />);
    expect(screen.getByText(/no longer pending: allowed, by one of your rules/)).toBeTruthy();
  });

  it('the decided detail shows the edited input as text and the reason', () => {
    render(<RequestDetail row={rowFor(bashPermission(), { status: 'approved', outcome: { decision: 'approved', values: { updatedInput: { command: 'ls' } } } })} />);
    expect(screen.getByText('Allowed, with an edited input')).toBeTruthy();
    expect(screen.getByLabelText('Edited input').textContent).toBe(JSON.stringify({ command: 'ls' }, null, 2));
  });
});
