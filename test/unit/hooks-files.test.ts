// Where `hooks install` writes (issue 32, finding 6): through a symbolic link to its final target, the link kept, the
// backup beside the target; a link that leads nowhere, loops, or to anything but a file refused; with --scope project,
// a target outside the project refused. On real files in a temporary folder.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSettings, writeSettings } from '../../server/hook/hooks-files.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'elicitly-hooks-files-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const dir = join(root, String(n++));
  mkdirSync(dir);
  return dir;
};

describe('resolveSettings', () => {
  it('a plain file, or none yet: itself, not linked', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'settings.json'), '{}');
    expect(resolveSettings(join(dir, 'settings.json'))).toEqual({ ok: true, path: join(dir, 'settings.json'), target: join(dir, 'settings.json'), exists: true, linked: false });
    expect(resolveSettings(join(dir, 'new', 'settings.json'))).toEqual({ ok: true, path: join(dir, 'new', 'settings.json'), target: join(dir, 'new', 'settings.json'), exists: false, linked: false });
  });

  it('a link, relative or through another link: its final target', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'dotfiles'));
    writeFileSync(join(dir, 'dotfiles', 'real.json'), '{}');
    symlinkSync('dotfiles/real.json', join(dir, 'hop.json'));
    symlinkSync('hop.json', join(dir, 'settings.json'));
    expect(resolveSettings(join(dir, 'settings.json'))).toMatchObject({ ok: true, target: join(dir, 'dotfiles', 'real.json'), exists: true, linked: true });
  });

  it('a missing file in a linked folder: created in the folder the link leads to', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(dir, '.claude'));
    expect(resolveSettings(join(dir, '.claude', 'settings.json'))).toMatchObject({ ok: true, target: join(dir, 'elsewhere', 'settings.json'), exists: false, linked: false });
  });

  it.each([
    ['a dangling link', 'settings.json', (dir: string) => symlinkSync(join(dir, 'gone.json'), join(dir, 'settings.json')), /settings\.json is a symbolic link to .*gone\.json, which does not exist; create it or remove the link$/],
    ['a dangling folder link', 'sub/settings.json', (dir: string) => symlinkSync(join(dir, 'gone'), join(dir, 'sub')), /settings\.json: its folder .*sub is a symbolic link to .*gone, which does not exist/],
    ['a loop', 'settings.json', (dir: string) => {
      symlinkSync(join(dir, 'b'), join(dir, 'a'));
      symlinkSync(join(dir, 'a'), join(dir, 'b'));
      symlinkSync(join(dir, 'a'), join(dir, 'settings.json'));
    }, /settings\.json leads through symbolic links that loop/],
    ['a link to a folder', 'settings.json', (dir: string) => {
      mkdirSync(join(dir, 'folder'));
      symlinkSync(join(dir, 'folder'), join(dir, 'settings.json'));
    }, /settings\.json \(a symbolic link to .*folder\) is not a regular file$/],
    ['a folder', 'settings.json', (dir: string) => mkdirSync(join(dir, 'settings.json')), /settings\.json is not a regular file$/],
    ['a file where a folder should be', 'sub/settings.json', (dir: string) => writeFileSync(join(dir, 'sub'), ''), /sub\/settings\.json cannot be reached \(ENOTDIR/],
  ])('%s at %s: refused, naming the file', (_name, relative, make, why) => {
    const dir = fresh();
    make(dir);
    const file = resolveSettings(join(dir, relative));
    expect(file).toMatchObject({ ok: false });
    if (!file.ok) expect(file.why).toMatch(why);
  });

  it('--scope project: a target inside the project is fine; one outside it, by a file or a folder link, is refused', () => {
    const dir = fresh();
    const project = join(dir, 'project');
    mkdirSync(join(project, '.claude'), { recursive: true });
    mkdirSync(join(project, 'config'));
    writeFileSync(join(project, 'config', 'claude.json'), '{}');
    writeFileSync(join(dir, 'outside.json'), '{}');
    symlinkSync('../config/claude.json', join(project, '.claude', 'settings.json'));
    expect(resolveSettings(join(project, '.claude', 'settings.json'), project)).toMatchObject({ ok: true, target: join(project, 'config', 'claude.json') });

    symlinkSync(join(dir, 'outside.json'), join(project, '.claude', 'other.json'));
    const outside = resolveSettings(join(project, '.claude', 'other.json'), project);
    expect(outside).toEqual({
      ok: false,
      why: `${join(project, '.claude', 'other.json')} is a symbolic link to ${join(dir, 'outside.json')}, outside the project (${project}), and --scope project writes only inside it: use --scope user for settings of your own, or put a file in place of the link to share them with the project`,
    });

    mkdirSync(join(dir, 'codex-elsewhere'));
    symlinkSync(join(dir, 'codex-elsewhere'), join(project, '.codex'));
    const folder = resolveSettings(join(project, '.codex', 'config.toml'), project);
    expect(folder.ok).toBe(false);
    if (!folder.ok) expect(folder.why).toContain(`resolves to ${join(dir, 'codex-elsewhere', 'config.toml')}, outside the project`);
    // The project reached through a link of its own is still the project.
    symlinkSync(project, join(dir, 'project-link'));
    expect(resolveSettings(join(dir, 'project-link', '.claude', 'settings.json'), join(dir, 'project-link')).ok).toBe(true);
  });
});

describe('writeSettings', () => {
  it('through a link: the target replaced with its mode kept, the backup beside it, the link still a link', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'dotfiles'));
    mkdirSync(join(dir, 'claude'));
    const target = join(dir, 'dotfiles', 'settings.json');
    writeFileSync(target, '{"model":"opus"}\n');
    chmodSync(target, 0o600);
    const link = join(dir, 'claude', 'settings.json');
    symlinkSync(target, link);
    const file = resolveSettings(link);
    if (!file.ok) throw new Error(file.why);
    const backup = writeSettings(file, '{"model":"sonnet"}\n', new Date('2030-01-02T03:04:05.678Z'));
    expect(backup).toBe(`${target}.elicitly-backup-2030-01-02T03-04-05-678Z`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe('{"model":"sonnet"}\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readFileSync(backup!, 'utf8')).toBe('{"model":"opus"}\n');
    expect(readdirSync(join(dir, 'claude'))).toEqual(['settings.json']);
    expect(readdirSync(join(dir, 'dotfiles')).sort()).toEqual(['settings.json', 'settings.json.elicitly-backup-2030-01-02T03-04-05-678Z']);
  });

  it('a new file: its folders made, no backup, no temporary file left', () => {
    const dir = fresh();
    const file = resolveSettings(join(dir, 'a', 'b', 'config.toml'));
    if (!file.ok) throw new Error(file.why);
    expect(writeSettings(file, 'x = 1\n')).toBeNull();
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['config.toml']);
  });
});
