import { lstatSync, readlinkSync } from 'node:fs';

const MAX_LINKS = 40;

/**
 * An absolute path as the file system resolves it: step by step, each symbolic link that exists replaced by its
 * target before the next step, so `link/..` goes where the kernel goes (a textual `..` would not). Past the first step
 * that does not exist the rest is taken as text. Null when it cannot be known: a step it may not read, a loop of links.
 * Sync: a rule is matched in the create that files a request, a few lstat calls per path.
 */
export function realPath(absolute: string): string | null {
  const todo = absolute.split('/').filter((p) => p !== '' && p !== '.');
  let at = '';
  let exists = true;
  let links = 0;
  while (todo.length > 0) {
    const part = todo.shift() ?? '';
    if (part === '..') {
      at = at.slice(0, at.lastIndexOf('/'));
      continue;
    }
    const next = `${at}/${part}`;
    if (!exists) {
      at = next;
      continue;
    }
    try {
      if (lstatSync(next).isSymbolicLink()) {
        if (++links > MAX_LINKS) return null;
        const target = readlinkSync(next);
        todo.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
        if (target.startsWith('/')) at = '';
        continue;
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return null;
      exists = false;
    }
    at = next;
  }
  return at === '' ? '/' : at;
}
