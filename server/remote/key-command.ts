import type { Grant } from '../../shared/wire-fields.js';
import type { KeyAction } from '../config.js';
import type { Directory } from '../directory.js';
import { formatRelayToken } from './relay-token.js';
import type { CommandIo } from './remote-command.js';

interface KeyCommandOptions {
  state: Pick<Directory, 'addRelayKey' | 'relayKeys' | 'removeRelayKey'>;
  /** The hub's port: the token carries it, since a relay's proofs are bound to the port the hub bound. */
  port: number;
  action: KeyAction;
  io: CommandIo;
}

/**
 * `elicitly-companion key export|list|revoke`: keys for relays on other machines (an agent in a devcontainer or on an
 * SSH host), each its own and revocable alone; the install key never leaves this computer. A key is printed once, by
 * `export`; `list` shows names and ids only.
 */
export async function runKeyCommand({ state, port, action, io }: KeyCommandOptions): Promise<number> {
  if (action.kind === 'export') {
    const key = await state.addRelayKey(action.name, action.allow);
    io.stderr(
      `Exported the relay key ${JSON.stringify(key.name)} (${key.keyId}) for the hub on port ${port}. On the other machine, start the agent's elicitly-companion with:\n` +
        '  ELICITLY_HUB_URL=wss://<machine>.<tailnet>.ts.net   (this computer: `tailscale serve --bg ' +
        `${port}\` and \`elicitly-companion remote enable --origin https://<machine>.<tailnet>.ts.net\`)\n` +
        `    or ELICITLY_HUB_URL=ws://127.0.0.1:${port}   (an SSH tunnel from this computer: \`ssh -N -R ${port}:127.0.0.1:${port} <other machine>\`)\n` +
        '  ELICITLY_HUB_KEY=<the token below>\n' +
        `It is shown this once. Whoever holds it can file requests on this hub and read the answers to its own (never another agent's, never decide)${grantWords(key.allow ?? [])}, until \`elicitly-companion key revoke ${key.keyId}\`.\n`,
    );
    io.stdout(`${formatRelayToken({ port, keyId: key.keyId, key: key.key })}\n`);
    return 0;
  }
  if (action.kind === 'list') {
    const keys = state.relayKeys();
    if (keys.length === 0) io.stderr('No relay key is exported (elicitly-companion key export).\n');
    for (const key of keys) io.stdout(`${key.name}\t${key.keyId}\tcreated ${new Date(key.createdAt).toISOString()}\tallows ${(key.allow ?? []).join(',') || 'its own requests only'}\n`);
    return 0;
  }
  const removed = await state.removeRelayKey(action.keyId);
  io.stderr(
    removed
      ? `Revoked ${action.keyId}: a relay using it is cut off now and refused from now on.\n`
      : `No relay key has the id ${action.keyId} (see \`elicitly-companion key list\`).\n`,
  );
  return removed ? 0 : 1;
}

/** What a grant adds, in the words `key export` prints. */
function grantWords(allow: readonly Grant[]): string {
  return allow.includes('permission') ? ', and file a host\'s permission prompts (--allow permission)' : '';
}
