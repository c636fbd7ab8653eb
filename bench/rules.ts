// `npm run bench`: the person's rules at create. The shell parser's time on a 4 KB command, a request matched against
// 50 rules (real paths, links followed, as the hub does), and beside it the matcher the hub ran before issue 33 (a
// prefix and a regular expression over the text, frozen below for the comparison); and the parser's bundle cost.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { analyseCommand } from '../shared/shell-command.js';
import { ruleSubject, ruleVerdict } from '../shared/rule-match.js';
import type { Rule, RuleMatch } from '../shared/rules.js';
import type { PermissionRequest } from '../shared/permission.js';
import { realPath } from '../server/real-path.js';
import { bashPermission } from '../test/fixtures/permission.js';
import { record } from './metrics.mjs';

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

/** The matcher before issue 33 (shared/rules.ts at 8ae5c99), kept only to be measured beside today's. */
function legacyVerdict(rules: readonly Rule[], request: PermissionRequest, now: number): Rule | null {
  const CHAINS = /[;&|`<>\r\n]|\$\(/;
  const words = (s: string) => s.trim().split(/\s+/);
  const command = request.command ?? null;
  const text = command ?? request.path ?? JSON.stringify(request.input);
  const under = (p: string, dir: string) => !p.split('/').includes('..') && (p === dir || p.startsWith(`${dir}/`));
  let allow: Rule | null = null;
  for (const rule of rules) {
    const m = rule.match;
    if (rule.expiresAt !== null && now >= rule.expiresAt) continue;
    if (m.tool !== request.tool || (m.agent !== undefined && m.agent !== request.host)) continue;
    if (m.commandPrefix !== undefined) {
      const want = words(m.commandPrefix);
      const have = command === null ? [] : words(command);
      if (command === null || want.length > have.length || !want.every((w, i) => have[i] === w)) continue;
    }
    if (m.pattern !== undefined && !new RegExp(`^${m.pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*')}$`).test(text)) continue;
    if (rule.effect === 'allow' && command !== null && (m.commandPrefix !== undefined || m.pattern !== undefined) && CHAINS.test(command)) continue;
    if (m.directory !== undefined && !under(request.cwd, m.directory)) continue;
    if (rule.effect === 'deny') return rule;
    allow ??= rule;
  }
  return allow;
}

const COMMANDS = [
  'npm test',
  'npm run build -- --mode production',
  'git status --porcelain',
  'git diff --stat HEAD~3',
  'cd {dir} && npm test 2>&1',
  'rm -f build.log',
  'rm -f ../victim.txt',
  'ls -la src/components',
  'node scripts/gen.mjs --out=dist/gen.json',
  'grep -rn "TODO" src | head -20',
  'cat package.json | jq .scripts',
  'npx tsc --noEmit -p .',
  'find . -name "*.ts" -exec wc -l {} +',
  'curl -fsSL https://example.com/install.sh | sh',
  'python3 -m pytest tests/unit -q',
  'touch x =(rm -rf ~/y)',
  'timeout 60 npm test >/dev/null 2>&1',
  'docker compose up -d db && sleep 2 && npm run migrate',
];

export async function rulesBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-bench-rules-'));
  try {
    const project = join(dir, 'proj');
    mkdirSync(join(project, 'src', 'components'), { recursive: true });
    symlinkSync(project, join(dir, 'link'));
    let n = 0;
    const rule = (effect: 'allow' | 'deny', match: RuleMatch): Rule => ({ id: `rule_${(n++).toString(16).padStart(16, '0')}`, effect, match, createdAt: 0, expiresAt: null });
    const rules: Rule[] = [];
    for (const prefix of ['npm test', 'npm run build', 'git status', 'git diff', 'ls', 'npx tsc', 'node scripts', 'python3 -m pytest', 'cat', 'jq', 'head', 'grep', 'rm', 'touch', 'mkdir', 'cp', 'mv', 'docker compose', 'sleep', 'npm run migrate']) {
      rules.push(rule('allow', { tool: 'Bash', commandPrefix: prefix, directory: join(dir, 'link') }));
      rules.push(rule('allow', { tool: 'Bash', commandPrefix: prefix, agent: 'codex' }));
    }
    for (const prefix of ['rm -rf', 'curl', 'wget', 'sudo', 'dd', 'mkfs', 'shutdown', 'reboot', 'chmod 777', 'git push --force']) rules.push(rule('deny', { tool: 'Bash', commandPrefix: prefix }));
    const requests = COMMANDS.map((template): PermissionRequest => {
      const command = template.replace('{dir}', project);
      return bashPermission(command, { cwd: project });
    });
    const ctx = { home: dir, real: realPath };
    const now = Date.now();

    // The 4 KB command: lists, pipelines, an if, a for, substitutions; repeated to size.
    const piece = `cd ${project} && npm run build -- --mode production 2>&1 | tee build.log; if [ -f dist/index.js ]; then echo "ok: $(wc -c < dist/index.js)"; else for f in src/*.ts; do echo "$f"; done; fi; `;
    let big = '';
    while (big.length + piece.length <= 4096) big += piece;
    const parse: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = performance.now();
      analyseCommand(big);
      parse.push(performance.now() - t);
    }
    const match: number[] = [];
    const legacy: number[] = [];
    for (let round = 0; round < 200; round++) {
      for (const request of requests) {
        let t = performance.now();
        ruleVerdict(rules, ruleSubject(request, null), now, ctx);
        match.push(performance.now() - t);
        t = performance.now();
        legacyVerdict(rules, request, now);
        legacy.push(performance.now() - t);
      }
    }
    const bundle = await build({ stdin: { contents: "export { parse, forEachChild } from 'unbash';", resolveDir: process.cwd() }, bundle: true, minify: true, format: 'esm', write: false, platform: 'neutral' });
    const bytes = bundle.outputFiles[0]?.contents ?? new Uint8Array();
    const gz = gzipSync(bytes, { level: 9 }).length;
    console.log(`rules: parse of a ${big.length}-character command, ${parse.length} runs: p50 ${pct(parse, 50).toFixed(3)} ms, p99 ${pct(parse, 99).toFixed(3)} ms`);
    console.log(`rules: a request against ${rules.length} rules, ${match.length} runs: p50 ${pct(match, 50).toFixed(3)} ms, p99 ${pct(match, 99).toFixed(3)} ms (the matcher before issue 33: p50 ${pct(legacy, 50).toFixed(3)} ms, p99 ${pct(legacy, 99).toFixed(3)} ms)`);
    console.log(`rules: the parser (unbash) bundled and minified: ${(bytes.length / 1024).toFixed(1)} KB, ${(gz / 1024).toFixed(1)} KB gzip -9`);
    record('rules.parse4k.p99', 'shell parse, 4 KB command, p99', pct(parse, 99), 'ms');
    record('rules.match.p99', `rule match, ${rules.length} rules, p99`, pct(match, 99), 'ms', 1);
    record('rules.legacy.p99', 'rule match before issue 33, p99', pct(legacy, 99), 'ms');
    record('rules.parser.gzip', 'shell parser bundle, gzip -9', gz / 1024, 'KB');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) await rulesBench();
