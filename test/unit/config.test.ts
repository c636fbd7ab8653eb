import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { infoFlag, parseConfig } from '../../server/config.js';
import { DEFAULT_PROBE_TIMEOUT_MS } from '../../server/config.js';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';

const HOME = '/home/ada';
const parse = (argv: string[], env: Record<string, string> = {}, platform: NodeJS.Platform = 'linux') => parseConfig(argv, env, platform, () => HOME);

describe('parseConfig: defaults', () => {
  it('serves on the default port with the per-user state dir and the documented defaults', () => {
    expect(parse([])).toEqual({
      ok: true,
      config: {
        command: 'serve',
        hubIdleSeconds: 1800,
        hostDirs: {},
        hookEnv: {},
        pair: { kind: 'code' },
        rules: { kind: 'list' },
        passkey: { kind: 'list' },
        json: false,
        port: DEFAULT_HUB_PORT,
        stateDir: '/home/ada/.local/state/elicitly-companion',
        retentionDays: 7,
        minTimeoutSeconds: 60,
        probeTimeoutMs: DEFAULT_PROBE_TIMEOUT_MS,
        automaticNoMs: 250,
        userHome: null,
        logLevel: 'info',
      },
    });
  });

  it('ELICITLY_PUSH_SERVICES: origins, comma-separated; anything else is refused naming the variable', () => {
    const parsed = parse([], { ELICITLY_PUSH_SERVICES: 'https://push.example.com, http://127.0.0.1:9000' });
    expect(parsed.ok && parsed.config.pushServices).toEqual(['https://push.example.com', 'http://127.0.0.1:9000']);
    const bad = parse([], { ELICITLY_PUSH_SERVICES: 'https://push.example.com/path' });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? '' : bad.issues.join('\n')).toMatch(/ELICITLY_PUSH_SERVICES.*origin/);
  });

  it("a rule's ~ is $HOME, as a shell's is; unset, it is none (the passwd entry is not asked for)", () => {
    const parsed = parse([], { HOME: '/home/grace' });
    expect(parsed.ok && parsed.config.userHome).toBe('/home/grace');
  });

  it.each([
    ['linux', {}, '/home/ada/.local/state/elicitly-companion'],
    ['linux', { XDG_STATE_HOME: '/xdg' }, '/xdg/elicitly-companion'],
    ['darwin', {}, '/home/ada/Library/Application Support/elicitly-companion'],
    ['linux', { ELICITLY_STATE_DIR: '/custom' }, '/custom'],
    ['linux', { ELICITLY_STATE_DIR: '   ' }, '/home/ada/.local/state/elicitly-companion'],
  ] as const)('%s %j → %s', (platform, env, dir) => {
    const parsed = parse([], { ...env }, platform);
    expect(parsed.ok && parsed.config.stateDir).toBe(dir);
  });
});

describe('parseConfig: a process without a home', () => {
  const noHome = () => undefined;
  const asked = () => {
    throw new Error('the home was asked for');
  };

  it.each([
    ['linux', { ELICITLY_STATE_DIR: '/custom' }, '/custom'],
    ['darwin', { ELICITLY_STATE_DIR: '/custom' }, '/custom'],
    ['linux', { XDG_STATE_HOME: '/xdg' }, '/xdg/elicitly-companion'],
    ['win32', { LOCALAPPDATA: 'C:\\Local' }, join('C:\\Local', 'elicitly-companion')],
  ] as const)('%s %j: the home is not asked for → %s', (platform, env, dir) => {
    const parsed = parseConfig([], { ...env }, platform, asked);
    expect(parsed.ok && parsed.config.stateDir).toBe(dir);
  });

  it.each(['linux', 'darwin', 'win32'] as const)('finding 18b: %s with neither ELICITLY_STATE_DIR nor a home: one refusal naming ELICITLY_STATE_DIR', (platform) => {
    expect(parseConfig(['status'], {}, platform, noHome)).toEqual({
      ok: false,
      issues: [expect.stringMatching(/^ELICITLY_STATE_DIR: not set, and there is no home directory .*set ELICITLY_STATE_DIR/)],
    });
  });
});

describe('parseConfig: values', () => {
  it.each([
    [['--port', '23456'], {}, { port: 23456 }],
    [['--port=23457'], { ELICITLY_PORT: '1' }, { port: 23457 }],
    [[], { ELICITLY_PORT: ' 30000 ' }, { port: 30000 }],
    [['pair'], {}, { command: 'pair' }],
    [['pair', '--port', '2000'], {}, { command: 'pair', port: 2000, pair: { kind: 'code' } }],
    [['pair', '--list'], {}, { command: 'pair', pair: { kind: 'list' } }],
    [['pair', '--remove', 'moz-extension://x'], {}, { command: 'pair', pair: { kind: 'remove', target: 'moz-extension://x' } }],
    [['pair', '--remove', 'k_0123456789abcdef'], {}, { command: 'pair', pair: { kind: 'remove', target: 'k_0123456789abcdef' } }],
    [['remote', 'enable'], {}, { command: 'remote', remote: { kind: 'enable', origins: [] } }],
    [['remote', 'enable', '--origin', 'https://a.ts.net', '--port', '2002', '--origin', 'http://localhost:9'], {}, { port: 2002, remote: { kind: 'enable', origins: ['https://a.ts.net', 'http://localhost:9'] } }],
    [['remote', 'status', '--json'], {}, { command: 'remote', remote: { kind: 'status' }, json: true }],
    [['remote', 'notify', '--remind', '0.5', '--off'], {}, { remote: { kind: 'notify', remindMinutes: 0.5, off: true } }],
    [['remote', 'notify', '--ntfy', 'https://ntfy.sh/t', '--token', 'tk_1'], {}, { remote: { kind: 'notify', ntfy: 'https://ntfy.sh/t', token: 'tk_1', off: false } }],
    [['key', 'export'], {}, { command: 'key', key: { kind: 'export', name: 'remote relay' } }],
    [['key', 'revoke', 'k_0123456789abcdef'], {}, { key: { kind: 'revoke', keyId: 'k_0123456789abcdef' } }],
    [[], {}, { remoteHub: undefined }],
    [
      [],
      { ELICITLY_HUB_URL: 'wss://desk.tail1234.ts.net', ELICITLY_HUB_KEY: ` ek1.8765.k_0123456789abcdef.${'ab'.repeat(32)} ` },
      { remoteHub: { url: 'wss://desk.tail1234.ts.net', port: 8765, keyId: 'k_0123456789abcdef', key: 'ab'.repeat(32) } },
    ],
    [['status'], {}, { command: 'status', json: false }],
    [['status', '--json', '--port', '2001'], {}, { command: 'status', json: true, port: 2001 }],
    [['rules'], {}, { command: 'rules', rules: { kind: 'list' }, json: false }],
    [['rules', '--list', '--json'], {}, { command: 'rules', rules: { kind: 'list' }, json: true }],
    [['rules', '--remove', 'rule_0123456789abcdef'], {}, { command: 'rules', rules: { kind: 'remove', id: 'rule_0123456789abcdef' } }],
    [['passkey'], {}, { command: 'passkey', passkey: { kind: 'list' }, json: false }],
    [['passkey', '--list', '--json'], {}, { command: 'passkey', passkey: { kind: 'list' }, json: true }],
    [['passkey', '--remove', 'AbC-_1'], {}, { command: 'passkey', passkey: { kind: 'remove', id: 'AbC-_1' } }],
    [['passkey', '--require', 'permission,proposal'], {}, { command: 'passkey', passkey: { kind: 'require', require: ['permission', 'proposal'] } }],
    [['passkey', '--require', 'none'], {}, { command: 'passkey', passkey: { kind: 'require', require: [] } }],
    [[], { ELICITLY_RETENTION_DAYS: '0.5' }, { retentionDays: 0.5 }],
    [[], { ELICITLY_LEDGER_RETENTION_DAYS: '400' }, { ledgerRetentionDays: 400 }],
    [[], { ELICITLY_MIN_TIMEOUT_SECONDS: '1' }, { minTimeoutSeconds: 1 }],
    [[], { ELICITLY_PROBE_TIMEOUT_MS: ' 1500 ' }, { probeTimeoutMs: 1500 }],
    [[], {}, { automaticNoMs: 250 }],
    [[], { ELICITLY_AUTOMATIC_NO_MS: '800' }, { automaticNoMs: 800 }],
    [[], { ELICITLY_LOG_LEVEL: 'DEBUG' }, { logLevel: 'debug' }],
    [[], { ELICITLY_DATABASE_URL: 'postgres://hub:pw@db.internal:5432/elicitly' }, { databaseUrl: 'postgres://hub:pw@db.internal:5432/elicitly' }],
    [['reviewer', 'add', 'Ana', 'Pérez', '--group', 'ops,sec', '--group', 'db'], {}, { command: 'reviewer', reviewer: { kind: 'add', name: 'Ana Pérez', groups: ['ops', 'sec', 'db'] } }],
    [['reviewer', 'list', '--json'], {}, { command: 'reviewer', json: true, reviewer: { kind: 'list' } }],
    [['reviewer', 'remove', "Li O'Neil"], {}, { command: 'reviewer', reviewer: { kind: 'remove', name: "Li O'Neil" } }],
    [['routing', 'set', 'policy.json'], {}, { command: 'routing', routing: { kind: 'set', file: 'policy.json' } }],
    [['routing', 'show'], { ELICITLY_DATABASE_URL: 'postgres://db.example/elicitly' }, { command: 'routing', routing: { kind: 'show' }, databaseUrl: 'postgres://db.example/elicitly' }],
    [['pair', '--reviewer', 'Ana Pérez'], {}, { command: 'pair', pair: { kind: 'code', reviewer: 'Ana Pérez' } }],
    [['remote', 'pair', '--reviewer', 'Li'], {}, { command: 'remote', remote: { kind: 'pair', reviewer: 'Li' } }],
    [['hub', '--database', 'postgresql://db/elicitly'], { ELICITLY_DATABASE_URL: 'postgres://other/x' }, { command: 'hub', databaseUrl: 'postgresql://db/elicitly' }],
  ])('%j %j → %j', (argv, env, expected) => {
    const parsed = parse([...argv], { ...env });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.config).toMatchObject(expected);
  });
});

describe('parseConfig: refusals name the variable and the rule', () => {
  it.each([
    [[], { ELICITLY_PORT: 'abc' }, /^ELICITLY_PORT \(or --port\): .*number.*, got "abc"$/],
    [[], { ELICITLY_LEDGER_RETENTION_DAYS: '3' }, /^ELICITLY_LEDGER_RETENTION_DAYS: must be at least ELICITLY_RETENTION_DAYS \(7\), got 3$/],
    [['passkey', '--require', 'permission,sometimes'], {}, /^passkey --remove <id> \| passkey --require <permission,proposal,everything\|none>: /],
    [[], { ELICITLY_PORT: '70000' }, /^ELICITLY_PORT \(or --port\): Too big: .*65535/],
    [['--port', '1.5'], {}, /^ELICITLY_PORT \(or --port\): .*expected int/],
    [['--port'], {}, /^ELICITLY_PORT \(or --port\): /],
    [[], { ELICITLY_RETENTION_DAYS: '0' }, /^ELICITLY_RETENTION_DAYS: Too small/],
    [[], { ELICITLY_MIN_TIMEOUT_SECONDS: '-5' }, /^ELICITLY_MIN_TIMEOUT_SECONDS: Too small/],
    [[], { ELICITLY_PROBE_TIMEOUT_MS: '1.5' }, /^ELICITLY_PROBE_TIMEOUT_MS: .*expected int/],
    [[], { ELICITLY_AUTOMATIC_NO_MS: '0' }, /^ELICITLY_AUTOMATIC_NO_MS: Too small/],
    [[], { ELICITLY_LOG_LEVEL: 'loud' }, /^ELICITLY_LOG_LEVEL: .*"debug"\|"info"\|"warn"\|"error".*got "loud"$/],
    [[], { ELICITLY_DATABASE_URL: 'mysql://root:hunter2@db/x' }, /^ELICITLY_DATABASE_URL \(or hub --database URL\): must be a postgres:\/\/ or postgresql:\/\/ URL \(the value is not shown: it may hold a password\)$/],
    [['hub', '--database'], {}, /^ELICITLY_DATABASE_URL \(or hub --database URL\): must be a postgres/],
    [[], { ELICITLY_DATABASE_URL: 'postgres://db/x', ELICITLY_HUB_URL: 'wss://d.ts.net', ELICITLY_HUB_KEY: `ek1.8765.k_0123456789abcdef.${'ab'.repeat(32)}` }, /^ELICITLY_DATABASE_URL: is for the hub, and ELICITLY_HUB_URL makes this machine a relay/],
    [['reviewer'], {}, /^reviewer: add, list or remove, got null$/],
    [['routing'], {}, /^routing: set or show, got null$/],
    [['routing', 'set'], {}, /^routing set: name exactly one policy file/],
    [['routing', 'set', 'a.json', 'b.json'], {}, /^routing set: name exactly one policy file .* got \["a.json","b.json"\]$/],
    [['routing', 'show', 'extra'], {}, /^routing show: unexpected \["extra"\]$/],
    [['reviewer', 'add'], {}, /^reviewer add: name the reviewer/],
    [['reviewer', 'add', '<script>'], {}, /^reviewer add <name>: must be letters and digits/],
    [['reviewer', 'add', 'Ana', '--group', 'Ops Team'], {}, /^reviewer add --group: must be 1-40 of a-z/],
    [['pair', '--reviewer', ' '], {}, /^pair --reviewer: (must be letters|Too small)/],
    [['--verbose'], {}, /^"--verbose": unknown argument/],
    [['--list'], {}, /^"--list": unknown argument/],
    [['--json'], {}, /^"--json": unknown argument/],
    [['pair', '--json'], {}, /^"--json": unknown argument/],
    [['status', '--list'], {}, /^"--list": unknown argument/],
    [['rules', '--remove', 'rm -rf'], {}, /^rules --remove <id>: .*rule id/],
    [['rules', '--remove'], {}, /^rules --remove <id>: /],
    [['pair', '--remove'], {}, /^pair --remove <origin\|keyId>: Too small/],
    [['remote'], {}, /^remote: enable, pair, disable, status or notify, got null$/],
    [['remote', 'pair', 'now'], {}, /^remote pair: unexpected \["now"\]/],
    [['remote', 'pair', '--origin'], {}, /^"--origin": unknown argument/],
    [['remote', 'enable', '--json'], {}, /^"--json": unknown argument/],
    [['remote', 'enable', '--origin', 'https://a.ts.net/'], {}, /^remote enable --origin: must be an origin alone.*, got "https:\/\/a\.ts\.net\/"$/],
    [['remote', 'notify', '--before-expiry', '-1'], {}, /^remote notify --before-expiry: must be a number of minutes, got "-1"$/],
    [['key', 'revoke', 'k_1'], {}, /^key revoke <keyId>: must be a key id/],
    [['key', 'export', '--name', ' '], {}, /^key export --name: Too small/],
    [[], { ELICITLY_HUB_URL: 'https://desk.ts.net', ELICITLY_HUB_KEY: `ek1.8765.k_0123456789abcdef.${'ab'.repeat(32)}` }, /^ELICITLY_HUB_URL: must be a ws:\/\/ or wss:\/\/ URL.*, got "https:\/\/desk\.ts\.net"$/],
    [[], { ELICITLY_HUB_URL: 'wss://desk.ts.net' }, /^ELICITLY_HUB_URL and ELICITLY_HUB_KEY: set both .* or neither, got only ELICITLY_HUB_URL$/],
    [[], { ELICITLY_HUB_KEY: `ek1.8765.k_0123456789abcdef.${'ab'.repeat(32)}` }, /^ELICITLY_HUB_URL and ELICITLY_HUB_KEY: set both .* or neither, got only ELICITLY_HUB_KEY$/],
    [[], { ELICITLY_HUB_URL: 'wss://d.ts.net', ELICITLY_HUB_KEY: `ek1.70000.k_0123456789abcdef.${'ab'.repeat(32)}` }, /^ELICITLY_HUB_KEY: must be the token `elicitly-companion key export` printed \(ek1\.<port>\.<key id>\.<64 hex digits>\)$/],
    [[], { ELICITLY_HUB_URL: 'wss://d.ts.net', ELICITLY_HUB_KEY: 'ek1.8765.k_0123456789abcdef.secret' }, /^ELICITLY_HUB_KEY: must be the token/],
    [['hub'], { ELICITLY_HUB_URL: 'wss://d.ts.net', ELICITLY_HUB_KEY: `ek1.8765.k_0123456789abcdef.${'ab'.repeat(32)}` }, /^hub: ELICITLY_HUB_URL is set: this machine joins the hub there as a relay and runs none/],
  ])('%j %j is refused', (argv, env, message) => {
    const parsed = parse([...argv], { ...env });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues).toEqual([expect.stringMatching(message)]);
    // A key typed into the environment is a secret: a refusal never repeats it.
    if (!parsed.ok) expect(parsed.issues.join('\n')).not.toMatch(/secret|abab|hunter2/);
  });
});

describe('infoFlag: --help and --version answer before anything else is parsed', () => {
  it.each([
    [[], null],
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['help'], 'help'],
    [['status', '--help'], 'help'],
    [['--version'], 'version'],
    [['-v'], 'version'],
    [['-V'], 'version'],
    [['--version', '--help'], 'help'],
    [['pair', '--list'], null],
    [['status', '--json'], null],
  ] as const)('%j → %s', (argv, expected) => {
    expect(infoFlag(argv)).toBe(expected);
  });
});

describe('parseConfig: the reviewer page (ELICITLY_PHONE_DIR, ELICITLY_REMOTE_LISTEN)', () => {
  const TLS = { ELICITLY_REMOTE_CERT: '/etc/tls/cert.pem', ELICITLY_REMOTE_KEY: '/etc/tls/key.pem' };

  it('takes the phone dir seam and the HTTPS listener with its certificate', () => {
    const parsed = parse([], { ELICITLY_PHONE_DIR: '/tmp/phone', ELICITLY_REMOTE_LISTEN: '0.0.0.0:8443', ...TLS });
    expect(parsed.ok && parsed.config).toMatchObject({ phoneDir: '/tmp/phone', remoteListen: { host: '0.0.0.0', port: 8443, certFile: '/etc/tls/cert.pem', keyFile: '/etc/tls/key.pem' } });
    const v6 = parse([], { ELICITLY_REMOTE_LISTEN: '[::]:8443', ...TLS });
    expect(v6.ok && v6.config.remoteListen).toMatchObject({ host: '::', port: 8443 });
    const none = parse([]);
    expect(none.ok && none.config.remoteListen).toBeUndefined();
  });

  it.each([
    [{ ELICITLY_REMOTE_LISTEN: '0.0.0.0:8443' }, 'ELICITLY_REMOTE_LISTEN: needs ELICITLY_REMOTE_CERT and ELICITLY_REMOTE_KEY'],
    [{ ELICITLY_REMOTE_LISTEN: '0.0.0.0:8443', ELICITLY_REMOTE_CERT: '/c.pem' }, 'ELICITLY_REMOTE_LISTEN: needs ELICITLY_REMOTE_CERT and ELICITLY_REMOTE_KEY'],
    [{ ELICITLY_REMOTE_LISTEN: '8443', ...TLS }, 'ELICITLY_REMOTE_LISTEN: must be host:port'],
    [{ ELICITLY_REMOTE_LISTEN: 'https://0.0.0.0:8443', ...TLS }, 'ELICITLY_REMOTE_LISTEN: must be host:port'],
    [{ ELICITLY_REMOTE_LISTEN: '0.0.0.0:70000', ...TLS }, 'ELICITLY_REMOTE_LISTEN: the port must be 1–65535'],
    [{ ELICITLY_REMOTE_LISTEN: `0.0.0.0:${DEFAULT_HUB_PORT}`, ...TLS }, "ELICITLY_REMOTE_LISTEN: must not use the hub's own port"],
    [{ ELICITLY_REMOTE_CERT: '/c.pem' }, 'ELICITLY_REMOTE_CERT: only with ELICITLY_REMOTE_LISTEN'],
    [{ ELICITLY_REMOTE_KEY: '/k.pem' }, 'ELICITLY_REMOTE_KEY: only with ELICITLY_REMOTE_LISTEN'],
  ])('%j is refused naming the variable', (env, message) => {
    const parsed = parse([], env);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.join('\n')).toContain(message);
  });
});
