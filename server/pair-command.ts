import { PAIRING_TTL_MINUTES } from '../shared/hub-auth.js';
import type { Config } from './config.js';
import type { StateDir } from './state-dir.js';

/** The local clock time before which a code is valid, to the second (a time cut to the minute reads a minute short). */
export function validUntil(expiresAt: number): string {
  const at = new Date(expiresAt);
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/**
 * `elicitly-companion pair`: a one-time code an extension proves on the hub socket to receive its own key. The code is
 * printed alone on the last stdout line (scripts read it there); what to do with it goes to stderr. `--list` and
 * `--remove <origin>` show and forget paired extensions.
 */
export function runPairCommand(state: Pick<StateDir, 'createPairing' | 'pairedExtensions' | 'removePairedExtensions'>, action: Config['pair']): number {
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
  // The code's own deadline, not a count from now: the state dir's lock may have kept createPairing waiting, and a
  // count rounded from what is left read "9 minutes" beside the extension's "10 minutes".
  const pairing = state.createPairing();
  process.stderr.write(`Enter this code in the Elicitly extension (Settings → Pairing code → Pair) before ${validUntil(pairing.expiresAt)} (a code is valid ${PAIRING_TTL_MINUTES} minutes) to pair it with this computer:\n`);
  process.stdout.write(`${pairing.code}\n`);
  return 0;
}
