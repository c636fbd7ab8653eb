// Issue 32, finding 6, against the built CLI on real files: `hooks install` / `uninstall` through a symlinked settings
// file (dotfiles), a project-scope link that leaves the project, links that lead nowhere, and Codex config.toml files
// that hold hooks in every form TOML allows, or are not TOML at all. Whatever is refused is left byte for byte.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};

/** Every file and link under `dir`, each with what it holds (a link: where it points), to compare before and after. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) out[name] = `-> ${readlinkSync(path)}`;
    else if (stat.isFile()) out[name] = readFileSync(path, 'utf8');
  }
  return out;
}

const OTHER = { model: 'opus', hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/local/bin/audit.sh' }] }] } };
const OTHER_TEXT = `${JSON.stringify(OTHER, null, 2)}\n`;
const ourClaudeCommands = (text: string) => {
  const settings = JSON.parse(text) as { hooks?: Record<string, { hooks: { command: string }[] }[]> };
  return Object.values(settings.hooks ?? {}).flat().flatMap((g) => g.hooks).map((h) => h.command).filter((c) => c.includes(' hook --host claude-code '));
};

describe('issue 32 finding 6: hooks install through a symlinked settings file', () => {
  it('a symlinked user settings.json keeps its link: the target gets the hooks and the backup, uninstall goes through it too', async () => {
    const { home, claudeDir, env } = place();
    const target = join(home, 'dotfiles', 'claude', 'settings.json');
    write(target, OTHER_TEXT);
    const link = join(claudeDir, 'settings.json');
    symlinkSync(target, link);

    const install = await cli(env, ['install', 'claude-code']);
    expect(install.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    // PermissionRequest and Elicitation, with PostToolUse and PostToolUseFailure along with the first.
    expect(ourClaudeCommands(readFileSync(target, 'utf8'))).toHaveLength(4);
    expect(install.stdout).toContain(`${link}:\n  written through the symbolic link to ${target}\n`);
    expect(install.stdout).toContain(`backup of the previous file: ${target}.elicitly-backup-`);
    // The backup is beside the target, and nothing but the link is in the link's folder.
    expect(readdirSync(claudeDir)).toEqual(['settings.json']);
    expect(readdirSync(dirname(target)).filter((f) => f.startsWith('settings.json.elicitly-backup-'))).toHaveLength(1);

    const status = await cli(env, ['status']);
    expect(status.stdout).toContain(`claude-code (user): installed in ${link}`);

    const uninstall = await cli(env, ['uninstall', 'claude-code']);
    expect(uninstall.code).toBe(0);
    expect(readlinkSync(link)).toBe(target);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual(OTHER);
  });

  it('a symlinked Codex config.toml (a relative link) keeps its link; install and uninstall write its target', async () => {
    const { home, codexDir, env } = place();
    const before = 'model = "o4"\n';
    write(join(home, 'dotfiles', 'codex.toml'), before);
    const link = join(codexDir, 'config.toml');
    symlinkSync('../dotfiles/codex.toml', link);

    const install = await cli(env, ['install', 'codex']);
    expect(install.code).toBe(0);
    expect(readlinkSync(link)).toBe('../dotfiles/codex.toml');
    const text = readFileSync(join(home, 'dotfiles', 'codex.toml'), 'utf8');
    expect(text.startsWith(before)).toBe(true);
    expect(parse(text)).toMatchObject({ model: 'o4', hooks: { PermissionRequest: [{ matcher: '*' }] } });

    expect((await cli(env, ['uninstall', 'codex'])).code).toBe(0);
    expect(readlinkSync(link)).toBe('../dotfiles/codex.toml');
    expect(readFileSync(join(home, 'dotfiles', 'codex.toml'), 'utf8')).toBe(before);
  });

  it.each([
    ['claude-code', join('.claude', 'settings.json'), OTHER_TEXT],
    ['codex', join('.codex', 'config.toml'), 'model = "o4"\n'],
  ])('--scope project: a %s settings link that leaves the project is refused, nothing written inside or outside', async (host, relative, text) => {
    const { home, project, env } = place();
    const outside = join(home, 'dotfiles', 'shared-settings');
    write(outside, text);
    const link = join(project, relative);
    mkdirSync(dirname(link));
    symlinkSync(outside, link);
    const before = { project: snapshot(project), outside: snapshot(dirname(outside)) };

    for (const action of ['install', 'uninstall']) {
      const run = await cli(env, [action, host, '--scope', 'project'], project);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(link);
      expect(run.stderr).toContain(outside);
      expect(run.stderr).toContain('outside the project');
      expect({ project: snapshot(project), outside: snapshot(dirname(outside)) }).toEqual(before);
    }
  });

  it('--scope project: a folder link (.claude -> elsewhere) that leaves the project is refused as well', async () => {
    const { home, project, env } = place();
    mkdirSync(join(home, 'elsewhere'));
    symlinkSync(join(home, 'elsewhere'), join(project, '.claude'));
    const run = await cli(env, ['install', 'claude-code', '--scope', 'project'], project);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('outside the project');
    expect(readdirSync(join(home, 'elsewhere'))).toEqual([]);
  });

  it('--scope project: a link to a file inside the project is written through, the link kept', async () => {
    const { project, env } = place();
    const target = join(project, 'config', 'claude-settings.json');
    write(target, OTHER_TEXT);
    const link = join(project, '.claude', 'settings.json');
    mkdirSync(dirname(link));
    symlinkSync('../config/claude-settings.json', link);
    const run = await cli(env, ['install', 'claude-code', '--scope', 'project'], project);
    expect(run.code).toBe(0);
    expect(readlinkSync(link)).toBe('../config/claude-settings.json');
    // PermissionRequest and Elicitation, with PostToolUse and PostToolUseFailure along with the first.
    expect(ourClaudeCommands(readFileSync(target, 'utf8'))).toHaveLength(4);
  });

  it.each([
    ['a dangling link', (dir: string, link: string) => symlinkSync(join(dir, 'gone.json'), link), /is a symbolic link to .*gone\.json, which does not exist/],
    ['a link loop', (dir: string, link: string) => {
      symlinkSync(join(dir, 'b.json'), join(dir, 'a.json'));
      symlinkSync(join(dir, 'a.json'), join(dir, 'b.json'));
      symlinkSync(join(dir, 'a.json'), link);
    }, /symbolic links that loop/],
    ['a link to a folder', (dir: string, link: string) => {
      mkdirSync(join(dir, 'folder'));
      symlinkSync(join(dir, 'folder'), link);
    }, /is not a regular file/],
    ['a folder', (_dir: string, link: string) => mkdirSync(link), /is not a regular file/],
  ])('%s where settings.json should be: refused, exit 1, nothing written', async (_name, make, why) => {
    const { home, claudeDir, env } = place();
    const elsewhere = join(home, 'elsewhere');
    mkdirSync(elsewhere);
    const link = join(claudeDir, 'settings.json');
    make(elsewhere, link);
    const before = { claude: snapshot(claudeDir), elsewhere: snapshot(elsewhere) };
    for (const action of ['install', 'uninstall']) {
      const run = await cli(env, [action, 'claude-code']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(why);
      expect(run.stderr).toContain(link);
      expect({ claude: snapshot(claudeDir), elsewhere: snapshot(elsewhere) }).toEqual(before);
    }
  });
});

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
    expect(hooks[1]!.hooks[0]!.command).toBe(`ELICITLY_STATE_DIR=${env.ELICITLY_STATE_DIR} ${process.execPath} ${SERVER_ENTRY} hook --host codex --wait 110 PermissionRequest`);
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
