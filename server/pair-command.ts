import type { Config } from './config.js';
import type { StateDir } from './state-dir.js';

/**
 * `elicitly-companion pair`: a one-time code an extension proves on the hub socket to receive its own key. The code is
 * printed alone on the last stdout line (scripts read it there); what to do with it goes to stderr. `--list` and
 * `--remove <origin>` show and forget paired extensions.
 */
export function runPairCommand(state: StateDir, action: Config['pair']): number {
  if (action.kind === 'list') {
    const paired = state.pairedExtensions();
    if (paired.length === 0) process.stderr.write('No browser extension is paired with this computer yet.\n');
    for (const entry of paired) process.stdout.write(`${entry.origin}\t${entry.keyId}\tpaired ${new Date(entry.pairedAt).toISOString()}\n`);
    return 0;
  }
  if (action.kind === 'remove') {
    const removed = state.removePairedExtensions(action.origin);
    process.stderr.write(removed > 0 ? `Forgot ${removed} key(s) of ${action.origin}; it must pair again to connect.\n` : `${action.origin} is not paired.\n`);
    return removed > 0 ? 0 : 1;
  }
  const pairing = state.createPairing();
  const minutes = Math.round((pairing.expiresAt - Date.now()) / 60_000);
  process.stderr.write(`Enter this code in the Elicitly extension (Settings → Pairing code → Pair) within ${minutes} minutes to pair it with this computer:\n`);
  process.stdout.write(`${pairing.code}\n`);
  return 0;
}
