import { readFileSync } from 'node:fs';

interface PackageInfo {
  name: string;
  version: string;
}

/** Found by walking up from this file, so it works from `dist/` and from an installed package alike. */
function readPackageInfo(): PackageInfo {
  let dir = new URL('.', import.meta.url);
  for (let depth = 0; depth < 5; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as Partial<PackageInfo>;
      if (pkg.name === 'elicitly-companion' && typeof pkg.version === 'string') return { name: pkg.name, version: pkg.version };
    } catch {
      // not at this level; keep walking
    }
    dir = new URL('..', dir);
  }
  return { name: 'elicitly-companion', version: '0.0.0' };
}

export const packageInfo = readPackageInfo();
export const SERVER_INFO = { name: 'elicitly', version: packageInfo.version } as const;
