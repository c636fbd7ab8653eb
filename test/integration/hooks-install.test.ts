// Issue 32, finding 6, against the built CLI on real files: `hooks install` / `uninstall` on Codex config.toml files
// that hold hooks in every form TOML allows, or are not TOML at all. Whatever is refused is left byte for byte.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A home of its own: every host setting under it, the project a folder beside. */
function place() {
  const home = mkdtempSync(join(tmpdir(), 'elicitly-hooks-'));
  dirs.push(home);
  const claudeDir = join(home, 'claude');
  const codexDir = join(home, 'codex');
  const project = join(home, 'project');
  for (const dir of [claudeDir, codexDir, project]) mkdirSync(dir);
  return { home, claudeDir, codexDir, project, env: { HOME: home, CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexDir, ELICITLY_STATE_DIR: join(home, 'state') } };
}

const cli = (env: Record<string, string>, args: string[], cwd?: string) =>
  runCommand(process.execPath, [SERVER_ENTRY, 'hooks', ...args], { env: { ELICITLY_LOG_LEVEL: 'warn', ...env }, timeout: 15_000, ...(cwd !== undefined ? { cwd } : {}) });

describe('issue 32 finding 6: hooks install codex on a config.toml of any valid form', () => {
  const codexFile = (codexDir: string, text: string) => {
    const file = join(codexDir, 'config.toml');
    writeFileSync(file, text);
    return file;
  };

  it.each([
    ['an inline array in [hooks]', '[hooks]\nPermissionRequest = [{ matcher = "Bash", hooks = [{ type = "command", command = "audit" }] }]\n', 'hooks.PermissionRequest'],
    ['a dotted key', 'model = "o4"\nhooks.PermissionRequest = [{ matcher = "Bash", hooks = [{ type = "command", command = "audit" }] }]\n', 'hooks.PermissionRequest'],
    ['an inline hooks table', 'hooks = { PermissionRequest = [{ matcher = "Bash", hooks = [{ type = "command", command = "audit" }] }] }\n', 'hooks.PermissionRequest'],
    ['an inline hooks table without the event', 'hooks = { PreToolUse = [{ matcher = "Bash", hooks = [{ type = "command", command = "audit" }] }] }\n', 'hooks'],
  ])('a valid config.toml with %s is refused: exit 1, byte-identical, the key named, never "added"', async (_name, text, key) => {
    const { codexDir, env } = place();
    const file = codexFile(codexDir, text);
    const run = await cli(env, ['install', 'codex']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).not.toContain('added');
    expect(run.stderr).toContain(`${file} defines ${key} `);
    expect(run.stderr).toContain('by hand');
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(readdirSync(codexDir)).toEqual(['config.toml']);
  });

  it('[[hooks.PermissionRequest]] tables of the person\'s own: ours is added after them, theirs kept, and uninstall restores the file', async () => {
    const { codexDir, env } = place();
    const before = '# my hooks\n[[hooks.PermissionRequest]]\nmatcher = "Bash"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = "audit"\n';
    const file = codexFile(codexDir, before);
    const run = await cli(env, ['install', 'codex']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('added PermissionRequest');
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(before)).toBe(true);
    const hooks = (parse(text) as { hooks: { PermissionRequest: { matcher: string; hooks: { command: string }[] }[] } }).hooks.PermissionRequest;
    expect(hooks.map((g) => g.matcher)).toEqual(['Bash', '*']);
    expect(hooks[1]!.hooks[0]!.command).toBe(`${process.execPath} ${SERVER_ENTRY} hook --host codex --wait 110 PermissionRequest`);
    expect((await cli(env, ['uninstall', 'codex'])).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a config.toml that is not valid TOML is refused with the parser\'s line and column, untouched', async () => {
    const { codexDir, env } = place();
    const text = 'model = "o4"\napproval_policy = on-request\n';
    const file = codexFile(codexDir, text);
    for (const action of ['install', 'uninstall']) {
      const run = await cli(env, [action, 'codex']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${file} is not valid TOML (line 2, column `);
      expect(readFileSync(file, 'utf8')).toBe(text);
      expect(readdirSync(codexDir)).toEqual(['config.toml']);
    }
  });
});
