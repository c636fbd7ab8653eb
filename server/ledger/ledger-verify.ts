import { createReadStream, existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import type { Receipt } from '../../shared/receipt.js';
import { decisionChallenge } from '../../shared/passkey.js';
import { assertionProblem } from '../passkeys/assertion-check.js';
import { GENESIS, checkpointSigned, keyIdOf, readEntry, type LedgerEntry } from './ledger-format.js';
import { CHECKPOINT_FILE, LEDGER_DIR, SEGMENT_FILE, segmentName } from './ledger-store.js';

/** Where the first problem is: the file, the line (1-based), the entry's index when it could be read, and what. */
export interface LedgerProblem {
  file: string;
  line: number;
  index?: number;
  problem: string;
}

export interface VerifyReport {
  ok: boolean;
  entries: number;
  segments: number;
  checkpoints: number;
  /** Entries after the last checkpoint: chained, not signed yet. */
  unsigned: number;
  first: LedgerProblem | null;
}

/**
 * Walks every segment in order and checks: each line canonical and carrying its own hash, each index one more than the
 * last, each `prev` the hash before it, each segment opening with a copy of the checkpoint that sealed the one before,
 * every checkpoint signed by `publicKey` over the chain as it is at that point, and the ledger not shorter than its
 * latest checkpoint (`checkpoint.json`). Stops at the first problem and names it. `onEntry` sees every good entry.
 */
export async function verifyLedger(stateDir: string, publicKey: KeyObject, onEntry?: (entry: LedgerEntry) => void): Promise<VerifyReport> {
  const dir = path.join(stateDir, LEDGER_DIR);
  const report: VerifyReport = { ok: false, entries: 0, segments: 0, checkpoints: 0, unsigned: 0, first: null };
  if (!existsSync(dir)) return { ...report, ok: true };
  const numbers = (await readdir(dir)).map((n) => SEGMENT_FILE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
  const keyId = keyIdOf(publicKey);
  let head = GENESIS;
  let next = 0;
  let previousLast: string | null = null;
  let lastCheckpoint: LedgerEntry | null = null;
  const fail = (file: string, line: number, problem: string, index?: number): VerifyReport => ({ ...report, ok: false, first: { file, line, problem, ...(index === undefined ? {} : { index }) } });
  for (const [s, n] of numbers.entries()) {
    const file = segmentName(n);
    if (s > 0 && n !== (numbers[s - 1] ?? 0) + 1) return fail(segmentName((numbers[s - 1] ?? 0) + 1), 0, 'this segment is missing');
    report.segments++;
    let lineNo = 0;
    let last = '';
    const lines = createInterface({ input: createReadStream(path.join(dir, file), { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
      lineNo++;
      if (lineNo === 1 && s > 0) {
        // A sealed segment's successor opens with the checkpoint that sealed it.
        if (line !== previousLast) return fail(file, 1, 'does not open with the checkpoint that sealed the segment before it (a segment was replaced)');
        last = line;
        continue;
      }
      const read = readEntry(line);
      if (!read.ok) return fail(file, lineNo, read.problem);
      const { entry } = read;
      if (entry.index !== next) return fail(file, lineNo, entry.index < next ? `index ${entry.index} comes after ${next - 1} (lines reordered or repeated)` : `index ${entry.index} where ${next} was due (entries removed)`, entry.index);
      if (entry.prev !== head) return fail(file, lineNo, 'does not name the hash of the entry before it (an entry changed, removed or moved)', entry.index);
      if (entry.event.type === 'checkpoint') {
        if (entry.event.size !== entry.index || entry.event.head !== entry.prev) return fail(file, lineNo, 'a checkpoint that does not sign the chain as it stands', entry.index);
        if (entry.event.keyId !== keyId || !checkpointSigned(publicKey, entry)) {
          return fail(file, lineNo, entry.event.keyId !== keyId ? `a checkpoint signed by another key (${entry.event.keyId}, expected ${keyId})` : 'a checkpoint whose signature does not verify', entry.index);
        }
        report.checkpoints++;
        report.unsigned = 0;
        lastCheckpoint = entry;
      } else {
        report.unsigned++;
      }
      onEntry?.(entry);
      head = entry.hash;
      next = entry.index + 1;
      report.entries = next;
      last = line;
    }
    const closing = readEntry(last);
    if (s < numbers.length - 1 && (!closing.ok || closing.entry.event.type !== 'checkpoint')) return fail(file, lineNo, 'a sealed segment that does not end with a checkpoint');
    previousLast = last;
  }
  const latest = await readFile(path.join(dir, CHECKPOINT_FILE), 'utf8').catch(() => null);
  if (latest !== null) {
    const read = readEntry(latest.trimEnd());
    if (!read.ok) return fail(CHECKPOINT_FILE, 1, read.problem);
    if (read.entry.index >= next) return fail(segmentName(numbers.at(-1) ?? 1), report.entries + 1, `the ledger ends at entry ${next - 1}, but its latest checkpoint (${CHECKPOINT_FILE}) is entry ${read.entry.index}: entries were cut from the end`);
    if (lastCheckpoint !== null && read.entry.index > lastCheckpoint.index) return fail(CHECKPOINT_FILE, 1, `entry ${read.entry.index} in ${CHECKPOINT_FILE} is not a checkpoint of this ledger`);
  }
  return { ...report, ok: true };
}

/**
 * A receipt checked against a verified ledger: its entry is there, says what the receipt says, and a checkpoint covers
 * it. A receipt with a passkey's assertion is checked offline too (`assertion-check.ts`), against the public key the
 * ledger recorded when that passkey was added, or against `passkeyKey` (SPKI DER, base64url) pinned by the person.
 */
export async function verifyReceipt(stateDir: string, publicKey: KeyObject, receipt: Receipt, passkeyKey?: string): Promise<{ ok: boolean; problem: string | null; report: VerifyReport }> {
  const seen: { entry: LedgerEntry | null; covered: boolean } = { entry: null, covered: false };
  const passkeys = new Map<string, string>();
  const report = await verifyLedger(stateDir, publicKey, (entry) => {
    if (entry.index === receipt.ledgerIndex) seen.entry = entry;
    if (entry.event.type === 'checkpoint' && entry.index > receipt.ledgerIndex) seen.covered = true;
    if (entry.event.type === 'passkey.added' && entry.index < receipt.ledgerIndex) passkeys.set(entry.event.credentialId, entry.event.publicKey);
  });
  if (!report.ok) return { ok: false, problem: 'the ledger does not verify', report };
  const { entry, covered } = seen;
  if (entry === null) return { ok: false, problem: `no entry ${receipt.ledgerIndex} in the ledger`, report };
  const { event } = entry;
  if (entry.hash !== receipt.entryHash) return { ok: false, problem: `entry ${receipt.ledgerIndex} is not the one the receipt names (another hash)`, report };
  if (event.type !== 'request.decided' || event.requestHash !== receipt.requestHash || event.decisionHash !== receipt.decisionHash || event.decidedVia !== receipt.decidedVia || event.decidedAt !== receipt.decidedAt) {
    return { ok: false, problem: `entry ${receipt.ledgerIndex} does not record the decision the receipt describes`, report };
  }
  if (!covered) return { ok: false, problem: `entry ${receipt.ledgerIndex} is not covered by a signed checkpoint yet (the hub signs one within a minute)`, report };
  const problem = passkeyProblem(receipt, event, keyIdOf(publicKey), passkeyKey ?? (receipt.passkey ? passkeys.get(receipt.passkey.credentialId) : undefined));
  return problem === null ? { ok: true, problem: null, report } : { ok: false, problem, report };
}

function passkeyProblem(receipt: Receipt, event: Extract<LedgerEntry['event'], { type: 'request.decided' }>, hub: string, publicKey: string | undefined): string | null {
  const { passkey } = receipt;
  if (!passkey) return event.passkey ? `entry ${receipt.ledgerIndex} records a passkey the receipt leaves out` : null;
  const { requestId, hub: receiptHub, ...evidence } = passkey;
  if (!event.passkey || !isDeepStrictEqual(event.passkey, evidence) || event.id !== requestId) return `entry ${receipt.ledgerIndex} does not record the passkey assertion the receipt carries`;
  if (receiptHub !== hub) return `the passkey signed for the hub ${receiptHub}, not this ledger's key ${hub}`;
  if (publicKey === undefined) return `the passkey ${passkey.credentialId} was never added in this ledger: give its public key with --passkey-key`;
  const challenge = decisionChallenge({ hub, requestId, requestHash: receipt.requestHash, decisionHash: receipt.decisionHash });
  const wrong = assertionProblem(evidence, { challenge, publicKey });
  return wrong === null ? null : `the passkey assertion does not hold: ${wrong}`;
}
