import { homedir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { GroupNameSchema, ReviewerNameSchema } from '../shared/reviewers.js';
import { DEFAULT_HUB_PORT } from '../shared/extension-id.js';
import { RuleIdSchema } from '../shared/rules.js';
import { CredentialIdSchema, PASSKEY_SCOPES, PasskeyScopeSchema } from '../shared/passkey-wire.js';
import { DeviceNameSchema, GRANTS, GrantSchema, KeyIdSchema } from '../shared/wire-fields.js';
import { DEFAULT_WAIT_SECONDS } from './hook/hooks-settings.js';
import type { HookHost } from './hook/hosts/hook-host.js';
import { HOOK_HOSTS, HOST_IDS, hookHost } from './hook/hosts/registry.js';
import { LogLevelSchema } from './log.js';
import { NtfySchema, RemoteConfigSchema, RemoteOriginSchema, WebhookSchema } from './remote-config.js';
import { HubUrlSchema, RelayTokenSchema } from './remote/relay-token.js';

/** How long the doctor's probe waits: below the ~60 s tool-call limit of common hosts, so the report still comes back in-band. */
export const DEFAULT_PROBE_TIMEOUT_MS = 40_000;
/** A host's decline or cancel faster than this is taken for its own, not a person's (no one reads a dialog that fast). */
export const DEFAULT_AUTOMATIC_NO_MS = 250;

/**
 * Everything the server reads from its command line and environment, parsed once in `main.ts` and passed down. A
 * value that does not parse stops the process with a message naming the variable and the rule: a typo in a port or a
 * state dir must not quietly connect this agent to another hub or another store.
 */
const PairActionSchema = z.discriminatedUnion('kind', [
  /** `reviewer`: whose browser the code pairs, on a team's hub (`reviewer add`). */
  z.strictObject({ kind: z.literal('code'), reviewer: ReviewerNameSchema.optional() }),
  z.strictObject({ kind: z.literal('list') }),
  /** An origin forgets that origin's extensions; a key id (k_…) forgets that device. */
  z.strictObject({ kind: z.literal('remove'), target: z.string().min(1) }),
]);

/** Minutes as a person types them (`--remind 10`, `--remind 0.5`); an empty or missing value is not 0. */
const minutes = (schema: z.ZodNumber) => z.string().regex(/^\d+(\.\d+)?$/, 'must be a number of minutes').transform(Number).pipe(schema);

/** `elicitly-companion remote …`: the reviewer page the hub serves to phones (remote.json). */
const RemoteActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('enable'), origins: z.array(RemoteOriginSchema) }),
  z.strictObject({ kind: z.literal('pair'), reviewer: ReviewerNameSchema.optional() }),
  z.strictObject({ kind: z.literal('disable') }),
  z.strictObject({ kind: z.literal('status') }),
  z
    .strictObject({
      kind: z.literal('notify'),
      ntfy: NtfySchema.shape.url.optional(),
      token: NtfySchema.shape.token,
      webhook: WebhookSchema.shape.url.optional(),
      remindMinutes: minutes(RemoteConfigSchema.shape.remindMinutes).optional(),
      beforeExpiryMinutes: minutes(RemoteConfigSchema.shape.beforeExpiryMinutes).optional(),
      off: z.boolean(),
    })
    .superRefine((notify, ctx) => {
      if (notify.token !== undefined && notify.ntfy === undefined) ctx.addIssue({ code: 'custom', path: ['token'], message: 'is the ntfy server\'s access token: give it with --ntfy <topic URL>' });
      if (notify.off && (notify.ntfy !== undefined || notify.webhook !== undefined)) {
        ctx.addIssue({ code: 'custom', path: ['off'], message: 'removes ntfy and the webhook: not together with --ntfy or --webhook' });
      }
      const changes = [notify.ntfy, notify.token, notify.webhook, notify.remindMinutes, notify.beforeExpiryMinutes].filter((v) => v !== undefined).length;
      if (changes === 0 && !notify.off) ctx.addIssue({ code: 'custom', path: [], message: 'name what to change: --ntfy <topic URL> [--token T], --webhook <url>, --remind <minutes>, --before-expiry <minutes> or --off' });
    }),
]);
export type RemoteAction = z.infer<typeof RemoteActionSchema>;

/** `elicitly-companion reviewer …`: a team's reviewers (reviewers.json). */
const ReviewerActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('add'), name: ReviewerNameSchema, groups: z.array(GroupNameSchema).max(32) }),
  z.strictObject({ kind: z.literal('list') }),
  z.strictObject({ kind: z.literal('remove'), name: ReviewerNameSchema }),
]);

/** `elicitly-companion routing …`: the team's routing policy (the hub's `routing.json`, or the team's database's). */
const RoutingActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('set'), file: z.string().min(1, 'name the policy file') }),
  z.strictObject({ kind: z.literal('show') }),
]);
export type RoutingAction = z.infer<typeof RoutingActionSchema>;

/** `elicitly-companion key …`: keys for relays on other machines (ELICITLY_HUB_KEY there). */
const KeyActionSchema = z.discriminatedUnion('kind', [
  /** `allow`: what the key may do besides filing and reading its own requests, granted by name (`GRANTS`). */
  z.strictObject({ kind: z.literal('export'), name: DeviceNameSchema, allow: z.array(GrantSchema).max(GRANTS.length) }),
  z.strictObject({ kind: z.literal('list') }),
  z.strictObject({ kind: z.literal('revoke'), keyId: KeyIdSchema }),
]);
export type KeyAction = z.infer<typeof KeyActionSchema>;

/** `elicitly-companion audit verify [--receipt F] [--key F] | export [--since T] [--format jsonl|csv] | key`. */
const AuditActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('verify'), receipt: z.string().min(1).optional(), key: z.string().min(1).optional() }),
  z.strictObject({ kind: z.literal('export'), since: z.coerce.date().optional(), format: z.enum(['jsonl', 'csv']).default('jsonl') }),
  z.strictObject({ kind: z.literal('key') }),
]);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/**
 * ELICITLY_HUB_URL + ELICITLY_HUB_KEY: this process joins a hub on another machine as a relay and is never a hub
 * itself. Both or neither: a URL without its key could only be refused there, and a key alone would be ignored.
 */
const RemoteHubSchema = z
  .strictObject({ url: HubUrlSchema.optional(), key: RelayTokenSchema.optional() })
  .refine((hub) => (hub.url === undefined) === (hub.key === undefined), 'set both (this agent joins the hub on another machine) or neither')
  .transform((hub) => (hub.url !== undefined && hub.key !== undefined ? { url: hub.url, ...hub.key } : undefined));
export type RemoteHub = NonNullable<z.output<typeof RemoteHubSchema>>;

/** What `elicitly-companion rules` does: `--list` the person's rules (default) or `--remove <id>` one. */
const RulesActionSchema = z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('list') }), z.strictObject({ kind: z.literal('remove'), id: RuleIdSchema })]);
export type RulesAction = z.infer<typeof RulesActionSchema>;

/**
 * What `elicitly-companion passkey` does: `--list` the person's passkeys (default), `--remove <id>` one (a lost one: the
 * terminal is the root of trust, as for pairing), or `--require <scopes|none>` set which requests need one.
 */
const PasskeyActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('list') }),
  z.strictObject({ kind: z.literal('remove'), id: CredentialIdSchema }),
  z.strictObject({ kind: z.literal('require'), require: z.array(PasskeyScopeSchema).max(PASSKEY_SCOPES.length) }),
]);
export type PasskeyAction = z.infer<typeof PasskeyActionSchema>;

/** A hook waits at most this long: the host's timeout is 10 s more, and one `await` call holds at most 600 s. */
const WaitSecondsSchema = z.coerce.number().int().min(1).max(590);

const HOSTS_TEXT = HOST_IDS.join('|');

/** A host the hook bridges (server/hook/hosts/registry.ts), by its id. */
const HookHostSchema = z.string().transform((id, ctx): HookHost => {
  const host = hookHost(id);
  if (host) return host;
  ctx.addIssue({ code: 'custom', message: `one of ${HOST_IDS.join(', ')}, got ${JSON.stringify(id)}` });
  return z.NEVER;
});

/** One of the host's events (checked against the host where both are parsed). */
const HookEventSchema = z.string().min(1);

/** `elicitly-companion hook --host <host> [--wait S] <event>`: one host prompt, bridged. */
const HookArgsSchema = z.strictObject({ host: HookHostSchema, event: HookEventSchema, waitSeconds: WaitSecondsSchema });

const ScopeSchema = z.enum(['user', 'project']);
const HooksActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('install'), host: HookHostSchema, scope: ScopeSchema, events: z.array(HookEventSchema).min(1), waitSeconds: WaitSecondsSchema }),
  z.strictObject({ kind: z.literal('uninstall'), host: HookHostSchema, scope: ScopeSchema }),
  z.strictObject({ kind: z.literal('status') }),
]);

/** `ELICITLY_REMOTE_LISTEN`: `host:port`, an IPv6 host in brackets (`[::]:8443`). */
const LISTEN_ADDRESS = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/** The optional HTTPS listener of the hub for the reviewer page: where, and the certificate the person supplies (PEM files). */
const RemoteListenSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65_535),
  certFile: z.string().min(1),
  keyFile: z.string().min(1),
});

/** A push service's origin, exactly (`https://push.example.com`, or http on loopback for a stand-in). */
const PushServiceSchema = z.string().max(200).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}, 'must be an http(s) origin alone, such as https://push.example.com');

const ConfigSchema = z.strictObject({
  command: z.enum(['serve', 'pair', 'status', 'rules', 'passkey', 'hook', 'hooks', 'hub', 'remote', 'key', 'audit', 'reviewer', 'routing']),
  hook: HookArgsSchema.optional(),
  hooks: HooksActionSchema.optional(),
  /** `elicitly-companion hub`: stop after this long with no pending request and no agent connected. */
  hubIdleSeconds: z.coerce.number().int().min(1).max(7 * 86_400),
  /** Each host's user settings folder by its id (`hooks`): its variable (CLAUDE_CONFIG_DIR, CODEX_HOME…), or under HOME. */
  hostDirs: z.record(z.string(), z.string()),
  /**
   * What `hooks install` writes into the hook command so the hook reaches this hub whatever the host passes on:
   * ELICITLY_PORT and ELICITLY_STATE_DIR, each only when it was set for this command (a host may not pass a person's
   * variables on: Gemini CLI drops them when it runs in CI).
   */
  hookEnv: z.strictObject({ ELICITLY_PORT: z.string().optional(), ELICITLY_STATE_DIR: z.string().optional() }),
  /** What `elicitly-companion pair` does: print a code (default), `--list` the paired extensions and devices, `--remove`. */
  pair: PairActionSchema,
  rules: RulesActionSchema,
  passkey: PasskeyActionSchema,
  remote: RemoteActionSchema.optional(),
  key: KeyActionSchema.optional(),
  audit: AuditActionSchema.optional(),
  reviewer: ReviewerActionSchema.optional(),
  routing: RoutingActionSchema.optional(),
  remoteHub: RemoteHubSchema,
  /** `elicitly-companion status --json` / `rules --list --json`: one JSON object on stdout, for scripts. */
  json: z.boolean(),
  port: z.coerce.number().int().min(1).max(65_535),
  stateDir: z.string().min(1),
  retentionDays: z.coerce.number().positive().max(36_500),
  /** How long the ledger keeps a sealed segment; unset: for ever (the default). At least `retentionDays`. */
  ledgerRetentionDays: z.coerce.number().positive().max(36_500).optional(),
  minTimeoutSeconds: z.coerce.number().positive().max(86_400),
  probeTimeoutMs: z.coerce.number().int().positive().max(3_600_000),
  /**
   * A host's "no" faster than this is its own, not a person's: an `auto` ask then goes on in the extension
   * (`ELICITLY_AUTOMATIC_NO_MS`, default 250). For a machine too loaded to answer a host within it, and for tests.
   */
  automaticNoMs: z.coerce.number().int().min(1).max(60_000),
  /** The person's home, for a rule's `~` paths; null where there is none (such a path then never matches). */
  userHome: z.string().min(1).nullable().default(null),
  logLevel: LogLevelSchema,
  /**
   * Where the reviewer page's files are read from (`ELICITLY_PHONE_DIR`); unset: the directory built beside the bundle.
   * A seam for tests and development, not a setting people need.
   */
  phoneDir: z.string().min(1).optional(),
  remoteListen: RemoteListenSchema.optional(),
  /**
   * Push services besides the browsers' own the hub may post a phone's notifications to (`ELICITLY_PUSH_SERVICES`,
   * comma-separated origins): a self-hosted one, or a test's stand-in on loopback.
   */
  pushServices: z.array(PushServiceSchema).min(1).max(8).optional(),
  /**
   * A team's PostgreSQL database for the requests (`ELICITLY_DATABASE_URL`, or `hub --database URL`); unset: the
   * journal in the state dir. Never shown back in a refusal or a log: it may hold a password.
   */
  databaseUrl: z
    .string()
    .max(2000)
    .refine((url) => /^postgres(ql)?:\/\//.test(url) && URL.canParse(url), 'must be a postgres:// or postgresql:// URL')
    .optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

/** Where each setting comes from, to name it in a refusal. */
const SOURCES: Record<keyof Config, string> = {
  command: 'command',
  hook: `hook --host <${HOSTS_TEXT}> [--wait S] <event>`,
  hooks: `hooks install|uninstall <${HOSTS_TEXT}> [--scope user|project] [--events E,E] [--wait S] | hooks status`,
  hubIdleSeconds: 'hub --idle-seconds',
  hostDirs: HOOK_HOSTS.map((host) => host.configDir.env).join(' / '),
  hookEnv: 'ELICITLY_PORT / ELICITLY_STATE_DIR',
  pair: 'pair --remove <origin|keyId>',
  rules: 'rules --remove <id>',
  passkey: 'passkey --remove <id> | passkey --require <permission,proposal,everything|none>',
  remote: 'remote enable|pair|disable|status|notify',
  key: 'key export|list|revoke',
  audit: 'audit verify [--receipt F] [--key F] | audit export [--since T] [--format jsonl|csv] | audit key',
  reviewer: 'reviewer add <name> [--group G]… | reviewer list [--json] | reviewer remove <name>',
  routing: 'routing set <policy.json> | routing show',
  remoteHub: 'ELICITLY_HUB_URL and ELICITLY_HUB_KEY',
  json: 'status --json',
  port: 'ELICITLY_PORT (or --port)',
  stateDir: 'ELICITLY_STATE_DIR',
  retentionDays: 'ELICITLY_RETENTION_DAYS',
  ledgerRetentionDays: 'ELICITLY_LEDGER_RETENTION_DAYS',
  minTimeoutSeconds: 'ELICITLY_MIN_TIMEOUT_SECONDS',
  probeTimeoutMs: 'ELICITLY_PROBE_TIMEOUT_MS',
  automaticNoMs: 'ELICITLY_AUTOMATIC_NO_MS',
  userHome: 'HOME',
  logLevel: 'ELICITLY_LOG_LEVEL',
  phoneDir: 'ELICITLY_PHONE_DIR',
  remoteListen: 'ELICITLY_REMOTE_LISTEN',
  pushServices: 'ELICITLY_PUSH_SERVICES',
  databaseUrl: 'ELICITLY_DATABASE_URL (or hub --database URL)',
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

/**
 * `ELICITLY_REMOTE_LISTEN` with its certificate and key, each refusal naming the variable: HTTPS only, so a listen
 * address without both files (or either file without an address) is refused rather than served some other way.
 */
function remoteListen(env: Env, hubPort: string, issues: string[]): z.input<typeof RemoteListenSchema> | undefined {
  const listen = set(env.ELICITLY_REMOTE_LISTEN);
  const certFile = set(env.ELICITLY_REMOTE_CERT);
  const keyFile = set(env.ELICITLY_REMOTE_KEY);
  if (listen === undefined) {
    if (certFile !== undefined) issues.push('ELICITLY_REMOTE_CERT: only with ELICITLY_REMOTE_LISTEN (the HTTPS listener it is the certificate of)');
    if (keyFile !== undefined) issues.push('ELICITLY_REMOTE_KEY: only with ELICITLY_REMOTE_LISTEN (the HTTPS listener it is the key of)');
    return undefined;
  }
  const match = LISTEN_ADDRESS.exec(listen);
  if (!match) {
    issues.push(`ELICITLY_REMOTE_LISTEN: must be host:port (e.g. 0.0.0.0:8443 or [::]:8443), got ${JSON.stringify(listen)}`);
    return undefined;
  }
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) issues.push(`ELICITLY_REMOTE_LISTEN: the port must be 1–65535, got ${match[3]}`);
  if (String(port) === hubPort) issues.push(`ELICITLY_REMOTE_LISTEN: must not use the hub's own port ${hubPort}`);
  if (certFile === undefined || keyFile === undefined) {
    issues.push('ELICITLY_REMOTE_LISTEN: needs ELICITLY_REMOTE_CERT and ELICITLY_REMOTE_KEY (PEM files of a certificate for the name the phone uses): it serves HTTPS only');
    return undefined;
  }
  return { host: match[1] ?? match[2] ?? '', port, certFile, keyFile };
}

type ParsedConfig = { ok: true; config: Config } | { ok: false; issues: string[] };

export const USAGE =
  'elicitly-companion [--port N] | pair [--reviewer <name> | --list | --remove <origin|keyId>] | status [--json] | rules [--list [--json] | --remove <id>] | ' +
  'passkey [--list [--json] | --remove <id> | --require <permission,proposal,everything|none>] | ' +
  `hook --host <${HOSTS_TEXT}> [--wait S] <event> | hooks install|uninstall <${HOSTS_TEXT}> [--scope user|project] [--events E,E] [--wait S] | ` +
  'hooks status | hub [--database URL] | remote enable [--origin <https origin>]… | remote pair [--reviewer <name>] | remote disable | remote status [--json] | ' +
  'remote notify [--ntfy <topic URL> [--token T]] [--webhook <url>] [--remind M] [--before-expiry M] [--off] | ' +
  'key export [--name N] [--allow permission] | key list | key revoke <keyId> | ' +
  'audit verify [--receipt F] [--key F] | audit export [--since T] [--format jsonl|csv] | audit key | ' +
  'reviewer add <name> [--group G]… | reviewer list [--json] | reviewer remove <name> | routing set <policy.json> | routing show | --help | --version';

const COMMANDS = ['pair', 'status', 'rules', 'passkey', 'hook', 'hooks', 'hub', 'remote', 'key', 'audit', 'reviewer', 'routing'] as const;
type Command = (typeof COMMANDS)[number] | 'serve';

/** The arguments of `hook`, `hooks` and `hub` (raw: the schema checks them and names what is wrong). */
function hookArgs(command: Command, args: string[], issues: string[]): { hook?: unknown; hooks?: unknown; idle?: string; database?: string; rest: string[] } {
  const rest: string[] = [];
  const out: { hook?: unknown; hooks?: unknown; idle?: string; database?: string; rest: string[] } = { rest };
  if (command === 'hub') {
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '--idle-seconds') out.idle = args[++i] ?? '';
      else if (args[i] === '--database') out.database = args[++i] ?? '';
      else rest.push(args[i] ?? '');
    }
    return out;
  }
  if (command !== 'hook' && command !== 'hooks') {
    rest.push(...args);
    return out;
  }
  let host: string | undefined;
  let wait: string | undefined;
  let scope: string | undefined;
  let events: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--host' && command === 'hook') host = args[++i] ?? '';
    else if (arg === '--wait') wait = args[++i] ?? '';
    else if (arg === '--scope' && command === 'hooks') scope = args[++i] ?? '';
    else if (arg === '--events' && command === 'hooks') events = args[++i] ?? '';
    else if (arg === '--port' || arg.startsWith('--port=')) {
      rest.push(arg);
      if (arg === '--port') rest.push(args[++i] ?? '');
    } else if (arg.startsWith('--')) rest.push(arg);
    else positional.push(arg);
  }
  if (command === 'hook') {
    const known = host === undefined ? undefined : hookHost(host);
    const events = known ? known.events.join(', ') : HOOK_HOSTS.map((h) => `${h.id}: ${h.events.join(', ')}`).join('; ');
    if (positional.length !== 1) issues.push(`hook: name exactly one event (${events}), got ${JSON.stringify(positional)}`);
    else if (known && !known.events.includes(positional[0]!)) issues.push(`hook: ${JSON.stringify(positional[0])} is not a ${known.id} hook event (${events})`);
    out.hook = { host, event: positional[0], waitSeconds: wait ?? DEFAULT_WAIT_SECONDS };
    return out;
  }
  const [kind, target, ...extra] = positional;
  if (extra.length > 0) issues.push(`hooks: unexpected ${JSON.stringify(extra)}`);
  if (kind === 'status') {
    if (target !== undefined) issues.push(`hooks status: takes no host, got ${JSON.stringify(target)}`);
    out.hooks = { kind };
  } else if (kind === 'install' || kind === 'uninstall') {
    const chosenHost = target === undefined ? undefined : hookHost(target);
    if (!chosenHost) {
      issues.push(`hooks ${kind}: name the host, one of ${HOST_IDS.join(', ')}, got ${JSON.stringify(target ?? null)}`);
      return out;
    }
    const chosen: string[] = events === undefined ? [...chosenHost.defaultEvents] : events.split(',').map((e) => e.trim()).filter(Boolean);
    for (const event of chosen) {
      if (!chosenHost.events.includes(event)) issues.push(`--events: ${JSON.stringify(event)} is not a ${chosenHost.id} hook event (${chosenHost.events.join(', ')})`);
    }
    out.hooks = kind === 'install' ? { kind, host: target, scope: scope ?? 'user', events: chosen, waitSeconds: wait ?? DEFAULT_WAIT_SECONDS } : { kind, host: target, scope: scope ?? 'user' };
  } else {
    issues.push(`hooks: install, uninstall or status, got ${JSON.stringify(kind ?? null)}`);
  }
  return out;
}

/** The flag each field of `remote` and `key` comes from, to name it in a refusal. */
/** How `reviewer`'s fields are written on its command line. */
const REVIEWER_FLAGS: Record<string, string> = { name: '<name>', groups: '--group' };
const ACTION_FLAGS: Record<string, string> = {
  origins: '--origin',
  ntfy: '--ntfy',
  token: '--token',
  webhook: '--webhook',
  remindMinutes: '--remind',
  beforeExpiryMinutes: '--before-expiry',
  off: '--off',
  name: '--name',
  allow: '--allow',
  keyId: '<keyId>',
  receipt: '--receipt',
  since: '--since',
  format: '--format',
};
/** Never echoed in a refusal: a secret typed on the command line should not be copied into logs too (and a flag has no value). */
const UNSHOWN_FIELDS = new Set(['token', 'off']);

/** The arguments of `remote` and `key` (raw: the schema checks them and names the flag that is wrong). */
function actionArgs(command: Command, args: string[], issues: string[]): { remote?: Record<string, unknown>; key?: Record<string, unknown>; audit?: Record<string, unknown>; json: boolean; rest: string[] } {
  const rest: string[] = [];
  if (command !== 'remote' && command !== 'key' && command !== 'audit') return { json: false, rest: args };
  const [kind, ...others] = args;
  const fields: Record<string, unknown> = { kind };
  let json = false;
  const positional: string[] = [];
  const value = (i: number): string => others[i] ?? '';
  const origins: string[] = [];
  const allow: string[] = [];
  for (let i = 0; i < others.length; i++) {
    const arg = others[i] ?? '';
    const field = (command === 'remote' ? REMOTE_FLAGS : command === 'audit' ? AUDIT_FLAGS : KEY_FLAGS).get(kind ?? '')?.get(arg);
    if (arg === '--port' || arg.startsWith('--port=')) {
      rest.push(arg);
      if (arg === '--port') rest.push(value(++i));
    } else if (arg === '--json' && command === 'remote' && kind === 'status') json = true;
    else if (field === 'origins') origins.push(value(++i));
    else if (field === 'allow') allow.push(...value(++i).split(',').map((grant) => grant.trim()).filter(Boolean));
    else if (field === 'off') fields.off = true;
    else if (field !== undefined) fields[field] = value(++i);
    else if (arg.startsWith('--')) rest.push(arg);
    else positional.push(arg);
  }
  if (command === 'remote') {
    if (kind === 'enable') fields.origins = origins;
    if (kind === 'notify') fields.off ??= false;
    if (!REMOTE_FLAGS.has(kind ?? '')) issues.push(`remote: enable, pair, disable, status or notify, got ${JSON.stringify(kind ?? null)}`);
    if (positional.length > 0) issues.push(`remote ${kind ?? ''}: unexpected ${JSON.stringify(positional)} (usage: ${USAGE})`);
    return { remote: fields, json, rest };
  }
  if (command === 'audit') {
    if (!AUDIT_FLAGS.has(kind ?? '')) issues.push(`audit: verify, export or key, got ${JSON.stringify(kind ?? null)}`);
    if (positional.length > 0) issues.push(`audit ${kind ?? ''}: unexpected ${JSON.stringify(positional)} (usage: ${USAGE})`);
    return { audit: fields, json, rest };
  }
  if (kind === 'export') {
    fields.name ??= 'remote relay';
    fields.allow = [...new Set(allow)];
  }
  if (kind === 'revoke') {
    if (positional.length !== 1) issues.push(`key revoke: name exactly one key id (see \`elicitly-companion key list\`), got ${JSON.stringify(positional)}`);
    fields.keyId = positional[0] ?? '';
  } else if (positional.length > 0) issues.push(`key ${kind ?? ''}: unexpected ${JSON.stringify(positional)} (usage: ${USAGE})`);
  if (!KEY_FLAGS.has(kind ?? '')) issues.push(`key: export, list or revoke, got ${JSON.stringify(kind ?? null)}`);
  return { key: fields, json, rest };
}

/** The arguments of `reviewer` (raw: the schema checks the name and the groups, and names what is wrong). */
function reviewerArgs(command: Command, args: string[], issues: string[]): { action?: Record<string, unknown>; json: boolean; rest: string[] } {
  if (command !== 'reviewer') return { json: false, rest: args };
  const [kind, ...others] = args;
  const rest: string[] = [];
  const positional: string[] = [];
  const groups: string[] = [];
  let json = false;
  for (let i = 0; i < others.length; i++) {
    const arg = others[i] ?? '';
    if (arg === '--group' && kind === 'add') groups.push(...(others[++i] ?? '').split(',').map((g) => g.trim()));
    else if (arg === '--json' && kind === 'list') json = true;
    else if (arg.startsWith('--')) rest.push(arg);
    else positional.push(arg);
  }
  if (kind !== 'add' && kind !== 'list' && kind !== 'remove') {
    issues.push(`reviewer: add, list or remove, got ${JSON.stringify(kind ?? null)}`);
    return { json, rest };
  }
  if (kind === 'list') {
    if (positional.length > 0) issues.push(`reviewer list: unexpected ${JSON.stringify(positional)}`);
    return { action: { kind }, json, rest };
  }
  // A name with spaces comes as one argument when quoted, and as several when not: either reads as the name.
  if (positional.length === 0) {
    issues.push(`reviewer ${kind}: name the reviewer (usage: ${SOURCES.reviewer})`);
    return { json, rest };
  }
  return { action: { kind, name: positional.join(' '), ...(kind === 'add' ? { groups } : {}) }, json, rest };
}

/** The arguments of `routing` (raw: the schema checks them). */
function routingArgs(command: Command, args: string[], issues: string[]): { action?: Record<string, unknown>; rest: string[] } {
  if (command !== 'routing') return { rest: args };
  const [kind, ...others] = args;
  const rest = others.filter((arg) => arg.startsWith('--'));
  const positional = others.filter((arg) => !arg.startsWith('--'));
  if (kind === 'show') {
    if (positional.length > 0) issues.push(`routing show: unexpected ${JSON.stringify(positional)}`);
    return { action: { kind }, rest };
  }
  if (kind !== 'set') {
    issues.push(`routing: set or show, got ${JSON.stringify(kind ?? null)}`);
    return { rest };
  }
  if (positional.length !== 1) {
    issues.push(`routing set: name exactly one policy file (usage: ${SOURCES.routing}), got ${JSON.stringify(positional)}`);
    return { rest };
  }
  return { action: { kind, file: positional[0] }, rest };
}

/** Each subcommand's flags and the field each fills. */
const REMOTE_FLAGS = new Map<string, Map<string, string>>([
  ['enable', new Map([['--origin', 'origins']])],
  ['pair', new Map([['--reviewer', 'reviewer']])],
  ['disable', new Map()],
  ['status', new Map()],
  [
    'notify',
    new Map([
      ['--ntfy', 'ntfy'],
      ['--token', 'token'],
      ['--webhook', 'webhook'],
      ['--remind', 'remindMinutes'],
      ['--before-expiry', 'beforeExpiryMinutes'],
      ['--off', 'off'],
    ]),
  ],
]);
const AUDIT_FLAGS = new Map<string, Map<string, string>>([
  ['verify', new Map([['--receipt', 'receipt'], ['--key', 'key']])],
  ['export', new Map([['--since', 'since'], ['--format', 'format']])],
  ['key', new Map()],
]);
const KEY_FLAGS = new Map<string, Map<string, string>>([
  ['export', new Map([['--name', 'name'], ['--allow', 'allow']])],
  ['list', new Map()],
  ['revoke', new Map()],
]);

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
  const command: Command = COMMANDS.find((c) => c === first) ?? 'serve';
  if (command !== 'serve') args.shift();
  const extra = hookArgs(command, args.splice(0), issues);
  const action = actionArgs(command, extra.rest, issues);
  const reviewer = reviewerArgs(command, action.rest, issues);
  const routing = routingArgs(command, reviewer.rest, issues);
  args.push(...routing.rest);
  let portArg: string | undefined;
  let pair: z.input<typeof PairActionSchema> = { kind: 'code' };
  let rules: z.input<typeof RulesActionSchema> = { kind: 'list' };
  // Checked by the schema, which names a scope it does not know.
  let passkey: unknown = { kind: 'list' };
  let json = action.json || reviewer.json;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--port') portArg = args[++i] ?? '';
    else if (arg.startsWith('--port=')) portArg = arg.slice('--port='.length);
    else if (command === 'pair' && arg === '--list') pair = { kind: 'list' };
    else if (command === 'pair' && arg === '--reviewer') pair = { kind: 'code', reviewer: args[++i] ?? '' };
    else if (command === 'pair' && arg === '--remove') pair = { kind: 'remove', target: args[++i] ?? '' };
    else if ((command === 'status' || command === 'rules' || command === 'passkey') && arg === '--json') json = true;
    else if (command === 'passkey' && arg === '--list') passkey = { kind: 'list' };
    else if (command === 'passkey' && arg === '--remove') passkey = { kind: 'remove', id: args[++i] ?? '' };
    else if (command === 'passkey' && arg === '--require') {
      const scopes = args[++i] ?? '';
      passkey = { kind: 'require', require: scopes === 'none' ? [] : scopes.split(',').map((s) => s.trim()) };
    }
    else if (command === 'rules' && arg === '--list') rules = { kind: 'list' };
    else if (command === 'rules' && arg === '--remove') rules = { kind: 'remove', id: args[++i] ?? '' };
    else issues.push(`${JSON.stringify(arg)}: unknown argument (usage: ${USAGE})`);
  }
  const stateDir = set(env.ELICITLY_STATE_DIR) ?? defaultStateDir(env, platform, home);
  if (stateDir === undefined) issues.push(NO_STATE_DIR);
  // Only `hooks` needs the hosts' settings, and the home is asked for only when it is part of the answer.
  const homeDir = command === 'hooks' && (!set(env.CLAUDE_CONFIG_DIR) || !set(env.CODEX_HOME)) ? (set(env.HOME) ?? home()) : undefined;
  const port = portArg ?? set(env.ELICITLY_PORT) ?? DEFAULT_HUB_PORT;
  const listen = remoteListen(env, String(port).trim(), issues);
  const phoneDir = set(env.ELICITLY_PHONE_DIR);
  const raw = {
    command,
    ...(extra.hook !== undefined ? { hook: extra.hook } : {}),
    ...(extra.hooks !== undefined ? { hooks: extra.hooks } : {}),
    hubIdleSeconds: extra.idle ?? 1800,
    hostDirs: command !== 'hooks' ? {} : Object.fromEntries(
      HOOK_HOSTS.flatMap((host) => {
        const named = set(env[host.configDir.env]);
        const dir = named !== undefined ? (host.configDir.envHoldsHome ? join(named, host.configDir.home) : named) : homeDir === undefined ? undefined : join(homeDir, host.configDir.home);
        return dir === undefined ? [] : [[host.id, dir]];
      }),
    ),
    hookEnv: command !== 'hooks' ? {} : {
      ...(String(port) !== String(DEFAULT_HUB_PORT) ? { ELICITLY_PORT: String(port).trim() } : {}),
      ...(set(env.ELICITLY_STATE_DIR) !== undefined && stateDir !== undefined ? { ELICITLY_STATE_DIR: stateDir } : {}),
    },
    pair,
    rules,
    passkey,
    ...(action.remote !== undefined ? { remote: action.remote } : {}),
    ...(action.key !== undefined ? { key: action.key } : {}),
    ...(action.audit !== undefined ? { audit: action.audit } : {}),
    ...(reviewer.action !== undefined ? { reviewer: reviewer.action } : {}),
    ...(routing.action !== undefined ? { routing: routing.action } : {}),
    remoteHub: { url: set(env.ELICITLY_HUB_URL), key: set(env.ELICITLY_HUB_KEY) },
    json,
    port,
    stateDir,
    retentionDays: set(env.ELICITLY_RETENTION_DAYS) ?? 7,
    ...(set(env.ELICITLY_LEDGER_RETENTION_DAYS) === undefined ? {} : { ledgerRetentionDays: set(env.ELICITLY_LEDGER_RETENTION_DAYS) }),
    minTimeoutSeconds: set(env.ELICITLY_MIN_TIMEOUT_SECONDS) ?? 60,
    probeTimeoutMs: set(env.ELICITLY_PROBE_TIMEOUT_MS) ?? DEFAULT_PROBE_TIMEOUT_MS,
    automaticNoMs: set(env.ELICITLY_AUTOMATIC_NO_MS) ?? DEFAULT_AUTOMATIC_NO_MS,
    logLevel: set(env.ELICITLY_LOG_LEVEL)?.toLowerCase() ?? 'info',
    // A shell's `~` is $HOME, not the passwd entry: no lookup here (a process without a home still starts).
    userHome: set(env.HOME) ?? null,
    ...(phoneDir !== undefined ? { phoneDir } : {}),
    ...(listen !== undefined ? { remoteListen: listen } : {}),
    ...(set(env.ELICITLY_PUSH_SERVICES) === undefined ? {} : { pushServices: String(set(env.ELICITLY_PUSH_SERVICES)).split(',').map((s) => s.trim()).filter((s) => s !== '') }),
    ...((extra.database ?? set(env.ELICITLY_DATABASE_URL)) === undefined ? {} : { databaseUrl: extra.database ?? set(env.ELICITLY_DATABASE_URL) }),
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as keyof Config;
      // Already named above, with what to do.
      if (key === 'stateDir' && stateDir === undefined) continue;
      if (key === 'pair' && issue.path[1] === 'reviewer') {
        issues.push(`pair --reviewer: ${issue.message}, got ${JSON.stringify((raw.pair as { reviewer?: unknown }).reviewer)}`);
        continue;
      }
      if (key === 'remote' || key === 'key' || key === 'audit' || key === 'reviewer') {
        const field = String(issue.path[1] ?? '');
        // A bad subcommand was named above already.
        if (field === 'kind') continue;
        const given = field === '' ? undefined : (raw[key] as Record<string, unknown> | undefined)?.[field];
        const shown = issue.path.length > 2 && Array.isArray(given) ? given[Number(issue.path[2])] : given;
        const got = given === undefined || UNSHOWN_FIELDS.has(field) ? '' : `, got ${JSON.stringify(shown)}`;
        issues.push(`${command} ${String((raw[key] as Record<string, unknown> | undefined)?.kind ?? '')}${field === '' ? '' : ` ${(key === 'reviewer' ? REVIEWER_FLAGS : ACTION_FLAGS)[field] ?? field}`}: ${issue.message}${got}`);
        continue;
      }
      if (key === 'remoteHub') {
        const which = issue.path[1];
        if (which === 'key') issues.push(`ELICITLY_HUB_KEY: ${issue.message}`);
        else if (which === 'url') issues.push(`ELICITLY_HUB_URL: ${issue.message}, got ${JSON.stringify(raw.remoteHub.url)}`);
        else issues.push(`${SOURCES.remoteHub}: ${issue.message}, got only ${raw.remoteHub.url === undefined ? 'ELICITLY_HUB_KEY' : 'ELICITLY_HUB_URL'}`);
        continue;
      }
      if (key === 'databaseUrl') {
        issues.push(`${SOURCES.databaseUrl}: ${issue.message} (the value is not shown: it may hold a password)`);
        continue;
      }
      if (key === 'hook' || key === 'hooks') {
        const field = issue.path.slice(1).map(String).join('.');
        issues.push(`${command} ${field === 'waitSeconds' ? '--wait' : field}: ${issue.message} (usage: ${SOURCES[key]})`);
        continue;
      }
      issues.push(`${SOURCES[key] ?? String(key)}: ${issue.message}, got ${JSON.stringify(raw[key as keyof typeof raw])}`);
    }
  }
  if (parsed.success && parsed.data.ledgerRetentionDays !== undefined && parsed.data.ledgerRetentionDays < parsed.data.retentionDays) {
    // The ledger must outlive the journal: a request still in the journal whose events were removed would be appended again.
    issues.push(`ELICITLY_LEDGER_RETENTION_DAYS: must be at least ELICITLY_RETENTION_DAYS (${parsed.data.retentionDays}), got ${parsed.data.ledgerRetentionDays}`);
  }
  if (parsed.success && parsed.data.remoteHub !== undefined && parsed.data.databaseUrl !== undefined) {
    issues.push('ELICITLY_DATABASE_URL: is for the hub, and ELICITLY_HUB_URL makes this machine a relay of a hub elsewhere: set one of them');
  }
  if (parsed.success && parsed.data.remoteHub !== undefined && command === 'hub') {
    issues.push('hub: ELICITLY_HUB_URL is set: this machine joins the hub there as a relay and runs none of its own (unset ELICITLY_HUB_URL and ELICITLY_HUB_KEY to run one here)');
  }
  return parsed.success && issues.length === 0 ? { ok: true, config: parsed.data } : { ok: false, issues };
}
