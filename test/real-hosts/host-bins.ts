import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The real agent hosts, pinned and installed outside the repo (`.ci/run` puts them in a cache folder and exports their
 * paths). Locally a suite is skipped when its host is missing and its title says how to install it; CI sets
 * ELICITLY_REQUIRE_HOSTS=1, and then a missing host is a failure.
 */
export const HOSTS_DIR = process.env.ELICITLY_HOSTS_DIR ?? join(homedir(), '.cache', 'elicitly-hosts');
export const HOSTS_REQUIRED = process.env.ELICITLY_REQUIRE_HOSTS === '1';

const INSTALL_HINT = (pkg: string) =>
  `mkdir -p ${HOSTS_DIR} && cd ${HOSTS_DIR} && echo '{"private":true}' > package.json && npm i --no-audit --no-fund ${pkg} (or run .ci/run, or set the path)`;

export interface Host {
  name: string;
  bin: string;
  found: boolean;
  package: string;
}

function host(name: string, envVar: string, binName: string, pkg: string): Host {
  const bin = process.env[envVar] ?? join(HOSTS_DIR, 'node_modules', '.bin', binName);
  return { name, bin, found: existsSync(bin), package: pkg };
}

export const CLAUDE = host('Claude Code', 'CLAUDE_BIN', 'claude', '@anthropic-ai/claude-code@2.1.332');
export const CODEX = host('Codex', 'CODEX_BIN', 'codex', '@openai/codex@0.171.0');
export const GEMINI = host('Gemini CLI', 'GEMINI_BIN', 'gemini', '@google/gemini-cli@0.61.0');
export const COPILOT = host('GitHub Copilot CLI', 'COPILOT_BIN', 'copilot', '@github/copilot@1.0.102');
export const OPENCODE = host('OpenCode', 'OPENCODE_BIN', 'opencode', 'opencode-ai@1.18.33');

/**
 * The title of a suite that needs `host`: it says when the suite was skipped and how to install the host. When CI
 * requires the hosts and this one is missing, a failing test stands in for the suite.
 */
export function hostSuite(what: string, host: Host): string {
  describe.runIf(!host.found && HOSTS_REQUIRED)(`${what}: prerequisites`, () => {
    it(`has ${host.name} (${host.package}) to drive (ELICITLY_REQUIRE_HOSTS=1)`, () => {
      expect.fail(`no ${host.name} at ${host.bin}; install it with: ${INSTALL_HINT(host.package)}`);
    });
  });
  return host.found ? `${what}, with the real ${host.name} (${host.package})` : `${what} — SKIPPED: no ${host.name} at ${host.bin}; install it with: ${INSTALL_HINT(host.package)}`;
}
