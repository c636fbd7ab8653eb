// Codex's config.toml (issue 32, finding 6): this install's hooks go in a marked block, the person's text is kept byte
// for byte, and every form TOML allows for `hooks` is either extended or refused with the key to fix, never turned
// into a file Codex cannot read. Each result is parsed here again, with the same parser Codex's file is held to.
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { codexInstalled as installedIn, mergeCodexConfig, TOML_BEGIN, TOML_END, unmergeCodexConfig as unmergeFrom } from '../../server/hook/hooks-codex-config.js';
import type { Desired } from '../../server/hook/hooks-settings.js';
import { codex as codexHost } from '../../server/hook/hosts/codex.js';

const codexInstalled = (text: string | null) => installedIn(text, codexHost);
const unmergeCodexConfig = (text: string | null) => unmergeFrom(text, codexHost);
const codex: Desired = { host: codexHost, node: '/usr/bin/node', script: '/opt/e/main.js', events: ['PermissionRequest'], waitSeconds: 110, waitingDir: '' };
const COMMAND = (event = 'PermissionRequest', wait = 110) => `/usr/bin/node /opt/e/main.js hook --host codex --wait ${wait} ${event}`;
const OURS = { matcher: '*', hooks: [{ type: 'command', command: COMMAND(), timeout: 120 }] };
const user = 'model = "o4"\napproval_policy = "on-request"\n\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "audit"\n';
const block = (wait = 110, eol = '\n') =>
  [TOML_BEGIN, '[[hooks.PermissionRequest]]', 'matcher = "*"', '[[hooks.PermissionRequest.hooks]]', 'type = "command"', `command = "${COMMAND('PermissionRequest', wait)}"`, `timeout = ${wait + 10}`, TOML_END].join(eol);
const theirs = '{ matcher = "Bash", hooks = [{ type = "command", command = "audit" }] }';

const ok = (merged: ReturnType<typeof mergeCodexConfig>) => {
  if (!merged.ok) throw new Error(merged.why);
  // These files keep the person's own settings: a merge never removes them.
  if (merged.text === null) throw new Error('the file would be removed');
  return { ...merged, text: merged.text };
};
type Hooks = { hooks?: Record<string, unknown[]> };
const hooksOf = (text: string) => (parse(text, { integersAsBigInt: 'asNeeded' }) as Hooks).hooks ?? {};

describe('Codex config.toml', () => {
  it('install appends one marked block after the user\'s config; twice changes nothing; uninstall restores it byte for byte', () => {
    const once = mergeCodexConfig(user, codex);
    expect(once).toEqual({ ok: true, text: `${user}\n${block()}\n`, changes: ['added PermissionRequest'] });
    if (!once.ok) return;
    expect(mergeCodexConfig(once.text, codex)).toEqual({ ok: true, text: once.text, changes: [] });
    expect(codexInstalled(once.text)).toEqual([{ event: 'PermissionRequest', command: COMMAND(), timeout: 120 }]);
    expect(unmergeCodexConfig(once.text)).toEqual({ ok: true, text: user, changes: ['removed PermissionRequest'] });
  });

  it('a new file holds the block alone; another wait rewrites the block in place', () => {
    const fresh = mergeCodexConfig(null, codex);
    expect(fresh).toEqual({ ok: true, text: `${block()}\n`, changes: ['added PermissionRequest'] });
    if (!fresh.ok) return;
    const after = `${fresh.text}\n[features]\nx = true\n`;
    const updated = ok(mergeCodexConfig(after, { ...codex, waitSeconds: 30, events: ['PreToolUse', 'PermissionRequest'] }));
    expect(updated.text.endsWith('\n[features]\nx = true\n')).toBe(true);
    expect(updated.changes).toEqual(['updated PermissionRequest', 'added PreToolUse']);
    expect(codexInstalled(updated.text).map((i) => [i.event, i.timeout])).toEqual([['PreToolUse', 40], ['PermissionRequest', 40]]);
  });

  // Every valid place `hooks` can already be in: the block goes in, the file reads back as before plus exactly ours.
  it.each([
    ['no file', null],
    ['an empty file', ''],
    ['a file without a final line end', 'model = "o4"'],
    ['other settings and their own [[hooks.PreToolUse]]', user],
    ['a [hooks] table holding another event inline', `[hooks]\nPreToolUse = [${theirs}]\n`],
    ['a dotted hooks.PreToolUse', `hooks.PreToolUse = [${theirs}]\n[profiles.fast]\nmodel = "o4-mini"\n`],
    ['their own [[hooks.PermissionRequest]] tables', '[[hooks.PermissionRequest]]\nmatcher = "Bash"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = "audit"\n'],
    ['an empty [hooks] table', '# mine\n[hooks]\n'],
    ['an earlier install\'s block in the middle (another wait)', `model = "o4"\n\n${block(30)}\n\n[features]\nx = true\n`],
    ['CRLF line ends', 'model = "o4"\r\n\r\n[features]\r\nx = true\r\n'],
    ['a 64-bit integer and dates', 'big = 9223372036854775807\nwhen = 1979-05-27T07:32:00Z\nday = 1979-05-27\n'],
  ])('install into %s: valid TOML with exactly our hook, the rest as it was', (_name, before) => {
    const merged = ok(mergeCodexConfig(before, codex));
    expect(merged.changes).toEqual([before?.includes(TOML_BEGIN) ? 'updated PermissionRequest' : 'added PermissionRequest']);
    const groups = hooksOf(merged.text).PermissionRequest ?? [];
    expect(groups.filter((g) => JSON.stringify(g).includes(' hook --host codex '))).toEqual([OURS]);
    if (before !== null && !before.includes(TOML_BEGIN)) expect(merged.text.startsWith(before)).toBe(true);
    if (before?.includes('\r\n')) expect(merged.text).not.toMatch(/[^\r]\n/);
    // Taking it out again gives the file back (the earlier block aside: it is replaced, not restored).
    const removed = ok(unmergeCodexConfig(merged.text));
    // A file without a final line end gets one.
    if (before !== null && !before.includes(TOML_BEGIN)) expect(removed.text).toBe(before === '' || before.endsWith('\n') ? before : `${before}\n`);
    expect(codexInstalled(removed.text)).toEqual([]);
  });

  it.each([
    ['an inline array under [hooks]', `[hooks]\nPermissionRequest = [${theirs}]\n`, /^defines hooks\.PermissionRequest as an array written inline, which \[\[hooks\.PermissionRequest\]\] tables cannot extend .* by hand/],
    ['a dotted hooks.PermissionRequest', `model = "o4"\nhooks.PermissionRequest = [${theirs}]\n`, /^defines hooks\.PermissionRequest /],
    ['an inline hooks table with the event', `hooks = { PermissionRequest = [${theirs}] }\n`, /^defines hooks\.PermissionRequest /],
    ['an inline hooks table without it', `hooks = { PreToolUse = [${theirs}] }\n`, /^defines hooks as an inline table .*by hand/],
    ['hooks that is not a table', 'hooks = "none"\n', /^defines hooks as a string, not a table/],
    ['an event that is a table, not an array', '[hooks.PermissionRequest]\nmatcher = "*"\n', /^defines hooks\.PermissionRequest as a table, where Codex reads \[\[hooks\.PermissionRequest\]\] tables/],
    ['a file that is not TOML', 'model = "o4"\napproval_policy = on-request\n', /^is not valid TOML \(line 2, column \d+: .+\); fix it, nothing was changed$/],
    ['a block cut by hand', `${user}${TOML_BEGIN}\n[[hooks.PermissionRequest]]\n`, /without "# <<< elicitly-companion hooks"/],
    ['a hook of ours outside the block (another wait)', `[[hooks.PermissionRequest]]\nmatcher = "*"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = "${COMMAND('PermissionRequest', 30)}"\n`, /outside its marked block \(hooks\.PermissionRequest\); take it out by hand/],
    ['a key written after the block, inside its last table', `${block(30)}\nmodel = "o4"\n`, /would not read back as the same settings/],
  ])('%s is refused with the key to fix', (_name, before, why) => {
    const merged = mergeCodexConfig(before, codex);
    expect(merged.ok).toBe(false);
    if (!merged.ok) expect(merged.why).toMatch(why);
  });

  it('uninstall: a hook of ours outside the block is refused; nothing of ours, nothing changed; a file that is not TOML refused', () => {
    const outside = `[[hooks.PermissionRequest]]\nmatcher = "*"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = "${COMMAND()}"\n`;
    expect(unmergeCodexConfig(outside)).toMatchObject({ ok: false, why: expect.stringMatching(/outside its marked block/) });
    expect(unmergeCodexConfig(user)).toEqual({ ok: true, text: user, changes: [] });
    expect(unmergeCodexConfig(null)).toEqual({ ok: true, text: '', changes: [] });
    expect(unmergeCodexConfig('a = ')).toMatchObject({ ok: false, why: expect.stringMatching(/^is not valid TOML \(line 1, column/) });
  });

  it('our hook already written by hand, exactly as wanted, is left as it is', () => {
    const byHand = `[hooks]\nPermissionRequest = [{ matcher = "*", hooks = [{ type = "command", command = "${COMMAND()}", timeout = 120 }] }]\n`;
    expect(mergeCodexConfig(byHand, codex)).toEqual({ ok: true, text: byHand, changes: [] });
    expect(codexInstalled(byHand)).toEqual([{ event: 'PermissionRequest', command: COMMAND(), timeout: 120 }]);
  });

  it('a line that only looks like a marker inside a multi-line string is no block', () => {
    const text = `note = """\n${TOML_END}\n"""\n`;
    const merged = mergeCodexConfig(text, codex);
    expect(merged.ok).toBe(false);
  });
});
