import { createPairingCode } from './state-dir.js';

/** `elicitly-companion pair`: a one-time code that pins an extension origin the hub cannot know in advance. */
export function runPairCommand(dir: string): void {
  const pairing = createPairingCode(dir);
  const minutes = Math.round((pairing.expiresAt - Date.now()) / 60_000);
  process.stdout.write(`${pairing.code}\n`);
  process.stderr.write(`Enter this code in the Elicitly extension's settings within ${minutes} minutes to pair it with this computer.\n`);
}
