import { PAIRING_TTL_MINUTES } from '../shared/hub-auth.js';
import { KeyIdSchema } from '../shared/wire-fields.js';
import type { Config } from './config.js';
import { pairingReviewer } from './reviewer-command.js';
import type { Directory } from './directory.js';

/** The local clock time before which a code is valid, to the second (a time cut to the minute reads a minute short). */
export function validUntil(expiresAt: number): string {
  const at = new Date(expiresAt);
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/**
 * `elicitly-companion pair`: a one-time code an extension proves on the hub socket to receive its own key (a phone
 * uses the same code, through `remote enable` / `remote pair`). The code is printed alone on the last stdout line
 * (scripts read it there); what to do with it goes to stderr. `--list` shows the paired extensions and devices, one a
 * line (kind, origin or device name, key id, when), and `--remove` forgets an extension by its origin or a device by its
 * key id; the hub closes the forgotten one's sockets when the file changes.
 */
export async function runPairCommand(
  state: Pick<Directory, 'createPairing' | 'pairedExtensions' | 'removePairedExtensions' | 'pairedDevices' | 'removePairedDevice' | 'reviewers'>,
  action: Config['pair'],
): Promise<number> {
  if (action.kind === 'list') {
    const extensions = state.pairedExtensions();
    const devices = state.pairedDevices();
    if (extensions.length === 0) process.stderr.write('No browser extension is paired with this computer yet.\n');
    if (devices.length === 0) process.stderr.write('No phone or other device is paired with the reviewer page (see `elicitly-companion remote enable`).\n');
    const whose = (entry: { reviewer?: string | undefined }) => (entry.reviewer === undefined ? '' : `\tfor ${entry.reviewer}`);
    for (const entry of extensions) process.stdout.write(`extension\t${entry.origin}\t${entry.keyId}\tpaired ${new Date(entry.pairedAt).toISOString()}${whose(entry)}\n`);
    for (const entry of devices) process.stdout.write(`device\t${entry.name}\t${entry.keyId}\tpaired ${new Date(entry.pairedAt).toISOString()}${whose(entry)}\n`);
    return 0;
  }
  if (action.kind === 'remove') {
    // A key id names one device; anything else is an extension's origin (an origin never looks like k_<16 hex>).
    if (KeyIdSchema.safeParse(action.target).success) {
      const device = state.pairedDevices().find((d) => d.keyId === action.target);
      const removed = await state.removePairedDevice(action.target);
      process.stderr.write(
        removed
          ? `Forgot the device ${JSON.stringify(device?.name ?? action.target)} (${action.target}); its open pages are cut off and it must pair again to connect.\n`
          : `No device is paired with the key id ${action.target} (see \`elicitly-companion pair --list\`; an extension is removed by its origin).\n`,
      );
      return removed ? 0 : 1;
    }
    const removed = await state.removePairedExtensions(action.target);
    process.stderr.write(removed > 0 ? `Forgot ${removed} key(s) of ${action.target}; it must pair again to connect.\n` : `${action.target} is not paired.\n`);
    return removed > 0 ? 0 : 1;
  }
  // The code's own deadline, not a count from now: the state dir's lock may have kept createPairing waiting, and a
  // count rounded from what is left read "9 minutes" beside the extension's "10 minutes".
  const forWhom = pairingReviewer(state, action.reviewer);
  if (!forWhom.ok) {
    process.stderr.write(`elicitly-companion pair: ${forWhom.message}\n`);
    return 2;
  }
  const pairing = await state.createPairing('extension', Date.now(), forWhom.reviewer);
  const theirs = forWhom.reviewer === undefined ? '' : ` as ${JSON.stringify(forWhom.reviewer)}'s (their decisions there are recorded with their name)`;
  process.stderr.write(`Enter this code in the Elicitly extension (Settings → Pairing code → Pair) before ${validUntil(pairing.expiresAt)} (a code is valid ${PAIRING_TTL_MINUTES} minutes) to pair it with this computer${theirs}:\n`);
  process.stdout.write(`${pairing.code}\n`);
  return 0;
}
