import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realPath } from '../../server/real-path.js';

// The hub's path resolution for directory-scoped rules: a link inside the project that points out of it must resolve
// to where it points, and `..` after a link goes where the kernel goes.
describe('realPath: links followed step by step, the rest as text', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'elicitly-real-path-')));
  const project = join(root, 'proj');
  mkdirSync(join(project, 'src'), { recursive: true });
  mkdirSync(join(root, 'outside', 'deep'), { recursive: true });
  writeFileSync(join(project, 'src', 'a.ts'), '');
  symlinkSync(join(root, 'outside', 'deep'), join(project, 'out'));
  symlinkSync('src', join(project, 'rel'));
  symlinkSync(join(project, 'loop1'), join(project, 'loop2'));
  symlinkSync(join(project, 'loop2'), join(project, 'loop1'));
  writeFileSync(join(project, 'file'), '');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    ['proj/src/a.ts', 'proj/src/a.ts'],
    ['proj/out/x', 'outside/deep/x'],
    ['proj/out/../y', 'outside/y'],
    ['proj/rel/a.ts', 'proj/src/a.ts'],
    ['proj/missing/../src', 'proj/src'],
    ['proj/missing/deeper/file', 'proj/missing/deeper/file'],
    ['proj/file/x', 'proj/file/x'],
  ])('%s → %s', (from, to) => {
    // Joined as text: path.join would take the `..` before the link is seen.
    expect(realPath(`${root}/${from}`)).toBe(join(root, to));
  });

  it('a loop of links cannot be resolved', () => {
    expect(realPath(join(project, 'loop1', 'x'))).toBeNull();
  });

  it('the root and dots', () => {
    expect(realPath('/')).toBe('/');
    expect(realPath('/../..')).toBe('/');
    expect(realPath(`${project}/./src/.`)).toBe(join(project, 'src'));
  });
});
