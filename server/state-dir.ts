import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function ensureStateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

function readOrCreate(file: string, make: () => string): string {
  try {
    writeFileSync(file, make(), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(file, 'utf8').trim();
}

/** The per-install secret relays present to the hub; created once, by whichever process needs it first. */
export function relaySecret(dir: string): string {
  ensureStateDir(dir);
  return readOrCreate(join(dir, 'secret'), () => randomBytes(32).toString('hex'));
}

interface PairingCode {
  code: string;
  expiresAt: number;
}

const PAIRING_FILE = 'pairing.json';
const ORIGINS_FILE = 'paired-origins.json';
const PAIRING_TTL_MS = 10 * 60 * 1000;

export function createPairingCode(dir: string, now = Date.now()): PairingCode {
  ensureStateDir(dir);
  // Short enough to type, long enough not to guess inside ten minutes behind an exact-origin check.
  const code = randomBytes(6).toString('hex');
  const pairing = { code, expiresAt: now + PAIRING_TTL_MS };
  writeFileSync(join(dir, PAIRING_FILE), JSON.stringify(pairing), { mode: 0o600 });
  return pairing;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

export function readPairingCode(dir: string): PairingCode | undefined {
  const raw = readJson(join(dir, PAIRING_FILE));
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { code, expiresAt } = raw as Record<string, unknown>;
  return typeof code === 'string' && typeof expiresAt === 'number' ? { code, expiresAt } : undefined;
}

export function clearPairingCode(dir: string): void {
  writeFileSync(join(dir, PAIRING_FILE), '{}', { mode: 0o600 });
}

export function pairedOrigins(dir: string): string[] {
  const raw = readJson(join(dir, ORIGINS_FILE));
  return Array.isArray(raw) ? raw.filter((o): o is string => typeof o === 'string') : [];
}

export function addPairedOrigin(dir: string, origin: string): void {
  const origins = new Set(pairedOrigins(dir));
  origins.add(origin);
  writeFileSync(join(dir, ORIGINS_FILE), JSON.stringify([...origins]), { mode: 0o600 });
}
