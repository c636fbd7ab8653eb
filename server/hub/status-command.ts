import { createConnection } from 'node:net';
import type { HubInfo } from '../../shared/peer-calls.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import type { StateDir } from '../state-dir.js';
import { RelayClient } from './relay-client.js';

/** `elicitly-companion status` exit codes (README "Command line"). */
export const STATUS_EXIT = { running: 0, noHub: 1, notOurHub: 3 } as const;

export type HubStatus =
  | { state: 'running'; port: number; stateDir: string; hub: HubInfo; protocol: number }
  | { state: 'no_hub'; port: number; stateDir: string }
  | { state: 'not_our_hub'; port: number; stateDir: string; detail: string };

const TIMEOUT_MS = 3000;

/** Whether anything accepts a TCP connection on the loopback port, within a bounded time. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(true), TIMEOUT_MS);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Asks the hub, as a relay would (its handshake proves the install key both ways), for its reviewers and queue. Never
 * opens the store; with nothing listening on the port it touches no state at all.
 */
export async function hubStatus(port: number, state: StateDir): Promise<HubStatus> {
  const base = { port, stateDir: state.path };
  if (!(await listening(port))) return { state: 'no_hub', ...base };
  // The hub reads the install key when a relay says hello; like any relay, this makes it if no relay has yet.
  const connection = await RelayClient.connect({ port, key: state.relayKey(), handshakeTimeoutMs: TIMEOUT_MS, callTimeoutMs: TIMEOUT_MS });
  if (!connection.ok) return { state: 'not_our_hub', ...base, detail: connection.detail };
  try {
    const answer = await connection.relay.call('info', {});
    if (!answer.ok) return { state: 'not_our_hub', ...base, detail: `the hub answered ${answer.error.code}: ${answer.error.message}` };
    return { state: 'running', ...base, hub: answer.value, protocol: PROTOCOL_VERSION };
  } finally {
    connection.relay.close();
  }
}

function ago(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  return minutes < 90 ? `${minutes} min ago` : `${Math.round(minutes / 60)} h ago`;
}

/** What a person reads. */
export function formatStatus(status: HubStatus, now = Date.now()): string {
  const lines: string[] = [];
  if (status.state === 'running') {
    const { hub } = status;
    lines.push(`Hub: running on 127.0.0.1:${status.port} (pid ${hub.pid}, protocol ${status.protocol})`);
    const seen = hub.lastSeenAt === null ? 'none has connected since the hub started' : `last seen ${ago(hub.lastSeenAt, now)}`;
    lines.push(`Browser extensions connected: ${hub.extensionsConnected} (${seen})`);
    lines.push(`Pending requests: ${hub.pending}`);
    if (hub.extensionsConnected === 0) lines.push('Nobody can review requests now: open the Elicitly extension, or pair one with `elicitly-companion pair`.');
  } else if (status.state === 'no_hub') {
    lines.push(`No hub is running on 127.0.0.1:${status.port}.`);
    lines.push("One starts with an agent's first approval call (any elicitly-companion process started by a host can become it).");
  } else {
    lines.push(`Port 127.0.0.1:${status.port} is held, but not by a hub of this install that answers: ${status.detail}.`);
    lines.push('Stop that program, or give elicitly-companion another port with ELICITLY_PORT (the same for every agent and the extension).');
  }
  lines.push(`State dir: ${status.stateDir}`);
  return `${lines.join('\n')}\n`;
}

export function statusExitCode(status: HubStatus): number {
  return status.state === 'running' ? STATUS_EXIT.running : status.state === 'no_hub' ? STATUS_EXIT.noHub : STATUS_EXIT.notOurHub;
}
