import { PAIRING_TTL_MINUTES, randomHex } from '../../shared/hub-auth.js';
import type { RemoteAction } from '../config.js';
import { validUntil } from '../pair-command.js';
import { pairingReviewer } from '../reviewer-command.js';
import type { RemoteConfig } from '../remote-config.js';
import { PHONE_PATH, RemoteConfigSchema, allowedOrigins } from '../remote-config.js';
import type { Directory } from '../directory.js';
import type { StateDir } from '../state-dir.js';
import { pageHubText, type PageHub } from './page-hub.js';

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

interface RemoteCommandOptions {
  state: Pick<StateDir, 'remote' | 'updateRemote'>;
  /** The paired devices and the team's reviewers: the state dir's, or a team's database's. */
  directory: Pick<Directory, 'createPairing' | 'pairedDevices' | 'reviewers'>;
  /** The hub's port: the page is on it (loopback), and `tailscale serve` forwards to it. */
  port: number;
  action: RemoteAction;
  json: boolean;
  io: CommandIo;
  /** Makes sure a hub serves the page (`enable`, `pair`): the link works only while one runs. */
  ensureHub(): Promise<PageHub>;
}

/** Where the person opens the page: the first origin they configured (their tunnel), else this computer's loopback. */
export function pageOrigin(config: RemoteConfig, port: number): string {
  return config.origins[0] ?? `http://127.0.0.1:${port}`;
}

/** What `remote status` shows of a secret: enough to tell two apart, never enough to use one. */
function masked(secret: string): string {
  return secret.length >= 12 ? `****${secret.slice(-4)}` : '****';
}

/**
 * `elicitly-companion remote enable|pair|disable|status|notify`: the reviewer page the hub serves to phones, kept in
 * remote.json (the hub reads it on every request, so nothing restarts). A pairing code is printed only here, in the
 * link and its QR code, never in a tool result: whoever holds it can pair a device for the next 10 minutes.
 */
export async function runRemoteCommand(options: RemoteCommandOptions): Promise<number> {
  const { state, directory, port, action, io } = options;
  switch (action.kind) {
    case 'enable': {
      const current = state.remote();
      const origins = [...new Set([...current.origins, ...action.origins])];
      // Each origin was checked when parsed; what is left is the file's own rule on the list (how many it keeps).
      const fits = RemoteConfigSchema.shape.origins.safeParse(origins);
      if (!fits.success) {
        io.stderr(`elicitly-companion remote enable --origin: remote.json keeps ${fits.error.issues[0]?.message ?? 'fewer origins'}, and this makes ${origins.length} (${origins.join(', ')})\n`);
        return 2;
      }
      const config = state.updateRemote((remote) => ({ ...remote, enabled: true, origins }));
      const added = action.origins.filter((origin) => !current.origins.includes(origin));
      const hub = await options.ensureHub();
      io.stderr(
        `The reviewer page is ${current.enabled ? 'on' : 'now on'}: ${pageOrigin(config, port)}${PHONE_PATH}. ${pageHubText(hub, port)} ` +
          `Allowed origins: ${allowedOrigins(config, port).join(', ')}.` +
          (added.length > 0 ? ` Added: ${added.join(', ')}.` : '') +
          '\n\n' +
          reachHelp(config, port) +
          '\n',
      );
      return printPairing(directory, config, port, io);
    }
    case 'pair': {
      const config = state.remote();
      if (!config.enabled) {
        io.stderr('elicitly-companion remote pair: the reviewer page is off, so no device could use a code: turn it on first with `elicitly-companion remote enable`\n');
        return 1;
      }
      const forWhom = pairingReviewer(directory, action.reviewer);
      if (!forWhom.ok) {
        io.stderr(`elicitly-companion remote pair: ${forWhom.message}\n`);
        return 2;
      }
      const hub = await options.ensureHub();
      if (hub !== 'running') io.stderr(`${pageHubText(hub, port)}\n`);
      return printPairing(directory, config, port, io, forWhom.reviewer);
    }
    case 'disable': {
      const was = state.remote().enabled;
      state.updateRemote((remote) => ({ ...remote, enabled: false }));
      const devices = directory.pairedDevices().length;
      io.stderr(
        `The reviewer page is ${was ? 'now off' : 'already off'}: the hub answers ${PHONE_PATH} with 404 and refuses every device's socket until \`elicitly-companion remote enable\`. ` +
          `${devices} paired device(s) are kept (forget one with \`elicitly-companion pair --remove <keyId>\`).\n`,
      );
      return 0;
    }
    case 'status':
      io.stdout(options.json ? `${JSON.stringify(statusJson(state, directory, port))}\n` : statusText(state, directory, port));
      return 0;
    case 'notify':
      return notify(state, action, io);
  }
}

async function printPairing(directory: RemoteCommandOptions['directory'], config: RemoteConfig, port: number, io: CommandIo, reviewer?: string): Promise<number> {
  const pairing = await directory.createPairing('device', Date.now(), reviewer);
  // `n`: the code's serial, so a page opened from an older QR code is told a newer one replaced it.
  const url = `${pageOrigin(config, port)}${PHONE_PATH}#pair=${pairing.code}&n=${pairing.serial}`;
  // Loaded only here: the QR encoder is nothing any other command (or an MCP server's start-up) needs. It is CommonJS,
  // and its split-off chunk exports only a default (the module's exports), so the named exports are read from that.
  const QRCode = (await import('qrcode')).default;
  const qr = await QRCode.toString(url, { type: 'terminal', small: true });
  io.stderr(
    `To pair a phone, scan this QR code or open the link below on it before ${validUntil(pairing.expiresAt)}; ` +
      `the code in it is valid ${PAIRING_TTL_MINUTES} minutes and pairs one device; it is the phone's own code ` +
      `(the extension's, from \`elicitly-companion pair\`, is another and does not replace it). Another device: \`elicitly-companion remote pair\` ` +
      `(it replaces this code).\n${qr}\n`,
  );
  io.stdout(`${url}\n`);
  return 0;
}

function reachHelp(config: RemoteConfig, port: number): string {
  if (config.origins.length > 0) {
    return (
      `The phone opens ${pageOrigin(config, port)}: that must forward to this hub on 127.0.0.1:${port} (for a tailnet name: \`tailscale serve --bg ${port}\`). ` +
      'The hub itself listens on 127.0.0.1 only.\n'
    );
  }
  return (
    'The hub listens on 127.0.0.1 only. To reach it from the phone, either:\n' +
    `  - Tailscale (TLS and identity by Tailscale): on this computer \`tailscale serve --bg ${port}\`, then\n` +
    '    `elicitly-companion remote enable --origin https://<machine>.<tailnet>.ts.net` (the name `tailscale serve status` shows);\n' +
    `  - or an SSH tunnel from a device with ssh: \`ssh -N -L ${port}:127.0.0.1:${port} <this computer>\`, then open http://127.0.0.1:${port}${PHONE_PATH} there.\n`
  );
}

type RemoteState = RemoteCommandOptions['state'];

function statusJson(state: RemoteState, directory: RemoteCommandOptions['directory'], port: number) {
  const config = state.remote();
  return {
    enabled: config.enabled,
    port,
    page: `${pageOrigin(config, port)}${PHONE_PATH}`,
    origins: config.origins,
    allowedOrigins: allowedOrigins(config, port),
    devices: directory.pairedDevices().map((device) => ({ name: device.name, keyId: device.keyId, pairedAt: new Date(device.pairedAt).toISOString() })),
    notify: {
      ntfy: config.ntfy ? { url: config.ntfy.url, ...(config.ntfy.token !== undefined ? { token: masked(config.ntfy.token) } : {}) } : null,
      webhook: config.webhook ? { url: config.webhook.url, secret: masked(config.webhook.secret) } : null,
      remindMinutes: config.remindMinutes,
      beforeExpiryMinutes: config.beforeExpiryMinutes,
    },
  };
}

function statusText(state: RemoteState, directory: RemoteCommandOptions['directory'], port: number): string {
  const status = statusJson(state, directory, port);
  const lines = [
    `Reviewer page: ${status.enabled ? `on at ${status.page}` : 'off (elicitly-companion remote enable)'}`,
    `Origins: ${status.origins.length > 0 ? status.origins.join(', ') : 'none configured'}${status.enabled ? ` (and loopback on port ${port})` : ''}`,
    `Devices: ${status.devices.length === 0 ? 'none paired' : status.devices.length}`,
    ...status.devices.map((device) => `  ${device.name}\t${device.keyId}\tpaired ${device.pairedAt}`),
    `ntfy: ${status.notify.ntfy ? `${status.notify.ntfy.url}${status.notify.ntfy.token !== undefined ? ` (token ${status.notify.ntfy.token})` : ''}` : 'off'}`,
    `Webhook: ${status.notify.webhook ? `${status.notify.webhook.url} (signed, secret ${status.notify.webhook.secret})` : 'off'}`,
    `Reminder: ${status.notify.remindMinutes > 0 ? `after ${status.notify.remindMinutes} min` : 'none'}; before expiry: ${status.notify.beforeExpiryMinutes > 0 ? `${status.notify.beforeExpiryMinutes} min` : 'none'}`,
  ];
  return `${lines.join('\n')}\n`;
}

function notify(state: RemoteState, action: Extract<RemoteAction, { kind: 'notify' }>, io: CommandIo): number {
  const secret = action.webhook !== undefined ? randomHex(32) : undefined;
  const config = state.updateRemote((remote) => {
    const next: RemoteConfig = { ...remote };
    if (action.off) {
      delete next.ntfy;
      delete next.webhook;
    }
    if (action.ntfy !== undefined) next.ntfy = { url: action.ntfy, ...(action.token !== undefined ? { token: action.token } : {}) };
    if (action.webhook !== undefined && secret !== undefined) next.webhook = { url: action.webhook, secret };
    if (action.remindMinutes !== undefined) next.remindMinutes = action.remindMinutes;
    if (action.beforeExpiryMinutes !== undefined) next.beforeExpiryMinutes = action.beforeExpiryMinutes;
    return next;
  });
  const said = [
    action.off ? 'ntfy and the webhook are off.' : '',
    action.ntfy !== undefined ? `ntfy: ${action.ntfy}${action.token !== undefined ? ' (with its token)' : ''}; subscribe to that topic in the ntfy app.` : '',
    action.remindMinutes !== undefined ? `Reminder after ${action.remindMinutes} min of waiting${action.remindMinutes === 0 ? ' (none)' : ''}.` : '',
    action.beforeExpiryMinutes !== undefined ? `One more ${action.beforeExpiryMinutes} min before a request expires${action.beforeExpiryMinutes === 0 ? ' (none)' : ''}.` : '',
    'Notifications never carry what an agent asks: only "Approval waiting from <agent>" and a link to the review.',
    config.enabled ? '' : 'The reviewer page is off: the links lead nowhere until `elicitly-companion remote enable`.',
  ].filter(Boolean);
  io.stderr(`${said.join('\n')}\n`);
  if (secret !== undefined && action.webhook !== undefined) {
    io.stderr(
      `Webhook: ${action.webhook} gets a JSON POST for each notification, signed in the X-Elicitly-Signature header (HMAC-SHA256 of the body with this secret). ` +
        'The secret is shown this once (below); running --webhook again makes a new one.\n',
    );
    io.stdout(`${secret}\n`);
  }
  return 0;
}
