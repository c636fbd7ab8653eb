import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { log } from '../log.js';
import { createPrivateFile, ensurePrivateDir, readPrivateFile, writePrivateFile } from '../private-files.js';
import type { LedgerKey } from './ledger-store.js';

export const LEDGER_KEY_FILE = 'ledger-signing-key.pem';

/** The key pair of an Ed25519 private key's PEM, or null. */
export function ledgerKeyOf(pem: string | undefined): LedgerKey | null {
  if (pem === undefined) return null;
  try {
    const privateKey = createPrivateKey(pem);
    if (privateKey.asymmetricKeyType !== 'ed25519') return null;
    return { privateKey, publicKey: createPublicKey(privateKey) };
  } catch {
    return null;
  }
}

export const newLedgerKeyPem = (): string => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/**
 * The hub's signing key for ledger checkpoints (Ed25519), kept like the install key: a 0600 file in the 0700 state dir,
 * created by whichever process needs it first. A damaged one is replaced and said loudly: checkpoints from then on are
 * signed by the new key, and `audit verify` against a pinned key names the first one it did not sign.
 */
export function ledgerKey(stateDir: string): LedgerKey {
  ensurePrivateDir(stateDir);
  const file = join(stateDir, LEDGER_KEY_FILE);
  let key = ledgerKeyOf(readPrivateFile(file));
  if (key === null && readPrivateFile(file) === undefined) {
    createPrivateFile(file, newLedgerKeyPem());
    key = ledgerKeyOf(readPrivateFile(file));
  }
  if (key !== null) return key;
  log('error', 'the ledger signing key file was damaged; replacing it: checkpoints are signed by a new key from now on (pin it again with `audit key`)', { file });
  writePrivateFile(file, newLedgerKeyPem());
  const replaced = ledgerKeyOf(readPrivateFile(file));
  if (replaced === null) throw new Error(`could not write a ledger signing key to ${file}`);
  return replaced;
}

/** The public key's PEM, to pin. */
export const publicKeyPem = (key: LedgerKey): string => key.publicKey.export({ format: 'pem', type: 'spki' }).toString();
