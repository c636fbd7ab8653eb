import { homedir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { DEFAULT_PROBE_TIMEOUT_MS } from '../shared/doctor-verdict.js';
import { DEFAULT_HUB_PORT } from '../shared/extension-id.js';
import { RuleIdSchema } from '../shared/rules.js';
import { LogLevelSchema } from './log.js';

/**
 * Everything the server reads from its command line and environment, parsed once in `main.ts` and passed down. A
 * value that does not parse stops the process with a message naming the variable and the rule: a typo in a port or a
 * state dir must not quietly connect this agent to another hub or another store.
 */
const PairActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('code') }),
  z.strictObject({ kind: z.literal('list') }),
  z.strictObject({ kind: z.literal('remove'), origin: z.string().min(1) }),
]);

/** What `elicitly-companion rules` does: `--list` the person's rules (default) or `--remove <id>` one. */
const RulesActionSchema = z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('list') }), z.strictObject({ kind: z.literal('remove'), id: RuleIdSchema })]);
export type RulesAction = z.infer<typeof RulesActionSchema>;

const ConfigSchema = z.strictObject({
  command: z.enum(['serve', 'pair', 'status', 'rules']),
  /** What `elicitly-companion pair` does: print a code (default), `--list` the paired extensions, `--remove <origin>`. */
  pair: PairActionSchema,
  rules: RulesActionSchema,
  /** `elicitly-companion status --json` / `rules --list --json`: one JSON object on stdout, for scripts. */
  json: z.boolean(),
  port: z.coerce.number().int().min(1).max(65_535),
  stateDir: z.string().min(1),
  retentionDays: z.coerce.number().positive().max(36_500),
  minTimeoutSeconds: z.coerce.number().positive().max(86_400),
  probeTimeoutMs: z.coerce.number().int().positive().max(3_600_000),
  logLevel: LogLevelSchema,
});
export type Config = z.infer<typeof ConfigSchema>;

/** Where each setting comes from, to name it in a refusal. */
const SOURCES: Record<keyof Config, string> = {
  command: 'command',
  pair: 'pair --remove <origin>',
  rules: 'rules --remove <id>',
  json: 'status --json',
  port: 'ELICITLY_PORT (or --port)',
  stateDir: 'ELICITLY_STATE_DIR',
  retentionDays: 'ELICITLY_RETENTION_DAYS',
  minTimeoutSeconds: 'ELICITLY_MIN_TIMEOUT_SECONDS',
  probeTimeoutMs: 'ELICITLY_PROBE_TIMEOUT_MS',
  logLevel: 'ELICITLY_LOG_LEVEL',
};

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The user's home, or undefined where there is none. os.homedir() throws when HOME is unset and the user has no passwd
 * entry (a container run under an arbitrary uid), which ended every command before it could read ELICITLY_STATE_DIR.
 */
function systemHome(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The platform's per-user state directory. The home is asked for only when it is part of the answer: with
 * ELICITLY_STATE_DIR, XDG_STATE_HOME or LOCALAPPDATA set, a process without a home still starts.
 */
function defaultStateDir(env: Env, platform: NodeJS.Platform, home: () => string | undefined): string | undefined {
  const under = (...parts: string[]): string | undefined => {
    const dir = home();
    return dir === undefined ? undefined : join(dir, ...parts);
  };
  if (platform === 'darwin') return under('Library', 'Application Support', 'elicitly-companion');
  const base = platform === 'win32' ? env.LOCALAPPDATA || under('AppData', 'Local') : env.XDG_STATE_HOME || under('.local', 'state');
  return base === undefined ? undefined : join(base, 'elicitly-companion');
}

const NO_STATE_DIR =
  'ELICITLY_STATE_DIR: not set, and there is no home directory to put the default state dir under (HOME is unset and ' +
  'the system knows no home for this user); set ELICITLY_STATE_DIR to a directory of this user\'s';

function set(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

type ParsedConfig = { ok: true; config: Config } | { ok: false; issues: string[] };

export const USAGE = 'elicitly-companion [--port N] | pair [--list | --remove <origin>] | status [--json] | rules [--list [--json] | --remove <id>] | --help | --version';

/**
 * `--help` and `--version` answer before anything else is read: a person asking for help with a broken
 * ELICITLY_PORT must still get it.
 */
export function infoFlag(argv: readonly string[]): 'help' | 'version' | null {
  if (argv.some((arg) => arg === '--help' || arg === '-h' || arg === 'help')) return 'help';
  if (argv.some((arg) => arg === '--version' || arg === '-v' || arg === '-V')) return 'version';
  return null;
}

export function parseConfig(
  argv: readonly string[],
  env: Env,
  platform: NodeJS.Platform = process.platform,
  home: () => string | undefined = systemHome,
): ParsedConfig {
  const issues: string[] = [];
  const args = [...argv];
  const first = args[0];
  const command = first === 'pair' || first === 'status' || first === 'rules' ? first : 'serve';
  if (command !== 'serve') args.shift();
  let portArg: string | undefined;
  let pair: z.input<typeof PairActionSchema> = { kind: 'code' };
  let rules: z.input<typeof RulesActionSchema> = { kind: 'list' };
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--port') portArg = args[++i] ?? '';
    else if (arg.startsWith('--port=')) portArg = arg.slice('--port='.length);
    else if (command === 'pair' && arg === '--list') pair = { kind: 'list' };
    else if (command === 'pair' && arg === '--remove') pair = { kind: 'remove', origin: args[++i] ?? '' };
    else if ((command === 'status' || command === 'rules') && arg === '--json') json = true;
    else if (command === 'rules' && arg === '--list') rules = { kind: 'list' };
    else if (command === 'rules' && arg === '--remove') rules = { kind: 'remove', id: args[++i] ?? '' };
    else issues.push(`${JSON.stringify(arg)}: unknown argument (usage: ${USAGE})`);
  }
  const stateDir = set(env.ELICITLY_STATE_DIR) ?? defaultStateDir(env, platform, home);
  if (stateDir === undefined) issues.push(NO_STATE_DIR);
  const raw = {
    command,
    pair,
    rules,
    json,
    port: portArg ?? set(env.ELICITLY_PORT) ?? DEFAULT_HUB_PORT,
    stateDir,
    retentionDays: set(env.ELICITLY_RETENTION_DAYS) ?? 7,
    minTimeoutSeconds: set(env.ELICITLY_MIN_TIMEOUT_SECONDS) ?? 60,
    probeTimeoutMs: set(env.ELICITLY_PROBE_TIMEOUT_MS) ?? DEFAULT_PROBE_TIMEOUT_MS,
    logLevel: set(env.ELICITLY_LOG_LEVEL)?.toLowerCase() ?? 'info',
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as keyof Config;
      // Already named above, with what to do.
      if (key === 'stateDir' && stateDir === undefined) continue;
      issues.push(`${SOURCES[key] ?? String(key)}: ${issue.message}, got ${JSON.stringify(raw[key])}`);
    }
  }
  return parsed.success && issues.length === 0 ? { ok: true, config: parsed.data } : { ok: false, issues };
}
