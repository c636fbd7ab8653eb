import { closeSync, createReadStream, existsSync, openSync, readSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import type { Receipt } from '../../shared/receipt.js';
import { decisionChallenge } from '../../shared/passkey.js';
import { assertionProblem } from '../passkeys/assertion-check.js';
import { GENESIS, checkpointSigned, keyIdOf, readEntry, sha256, type LedgerEntry } from './ledger-format.js';
import { CHECKPOINT_FILE, LEDGER_DIR, SEGMENT_FILE, segmentName } from './ledger-store.js';

/**
 * A ledger kept elsewhere than a state dir's segment files: the team's database (`pg-ledger.ts`). One chain with no
 * segments; `size` is the chain's length as the store itself says, so entries cut from its end show.
 */
export interface LedgerSource {
  /** Where a problem is, in a report: its table. */
  readonly name: string;
  /** The entries' lines in order, from this index on. */
  lines(from: number): AsyncIterable<string>;
  size(): Promise<number>;
}
/** A state dir (its `ledger/` files) or another source. */
export type LedgerPlace = string | LedgerSource;

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
  /** Segments removed by retention before the first one kept (which opens with the signed checkpoint it starts from). */
  pruned: number;
  first: LedgerProblem | null;
}

/**
 * Walks every segment in order and checks: each line canonical and carrying its own hash, each index one more than the
 * last, each `prev` the hash before it, each segment opening with a copy of the checkpoint that sealed the one before,
 * every checkpoint signed by `publicKey` over the chain as it is at that point, and the ledger not shorter than its
 * latest checkpoint (`checkpoint.json`). Stops at the first problem and names it. `onEntry` sees every good entry.
 */
export async function verifyLedger(place: LedgerPlace, publicKey: KeyObject, onEntry?: (entry: LedgerEntry) => void): Promise<VerifyReport> {
  if (typeof place !== 'string') return verifySource(place, publicKey, onEntry);
  const dir = path.join(place, LEDGER_DIR);
  const report: VerifyReport = { ok: false, entries: 0, segments: 0, checkpoints: 0, unsigned: 0, pruned: 0, first: null };
  if (!existsSync(dir)) return { ...report, ok: true };
  const numbers = (await readdir(dir)).map((n) => SEGMENT_FILE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
  const keyId = keyIdOf(publicKey);
  const walk: Walk = { head: GENESIS, next: 0, report, lastCheckpoint: null };
  let previousLast: string | null = null;
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
      if (lineNo === 1 && s === 0 && n > 1) {
        // The segments before were removed by retention: this one starts from the checkpoint that sealed the last of
        // them, which must be signed by the key and sign the chain it names. The walk goes on from there.
        const read = readEntry(line);
        if (!read.ok) return fail(file, 1, read.problem);
        const anchor = read.entry;
        if (anchor.event.type !== 'checkpoint' || anchor.event.size !== anchor.index || anchor.event.head !== anchor.prev) return fail(file, 1, 'the first segment kept does not open with a checkpoint (segments before it were removed, or it was replaced)', anchor.index);
        if (anchor.event.keyId !== keyId || !checkpointSigned(publicKey, anchor)) return fail(file, 1, `the checkpoint the kept ledger starts from is not signed by the key ${keyId}`, anchor.index);
        report.pruned = n - 1;
        walk.head = anchor.hash;
        walk.next = anchor.index + 1;
        report.entries = walk.next;
        walk.lastCheckpoint = anchor;
        last = line;
        continue;
      }
      if (lineNo === 1 && s > 0) {
        // A sealed segment's successor opens with the checkpoint that sealed it.
        if (line !== previousLast) return fail(file, 1, 'does not open with the checkpoint that sealed the segment before it (a segment was replaced)');
        last = line;
        continue;
      }
      const wrong = step(walk, line, publicKey, keyId, onEntry);
      if (wrong) return fail(file, lineNo, wrong.problem, wrong.index);
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
    if (read.entry.index >= walk.next) return fail(segmentName(numbers.at(-1) ?? 1), report.entries + 1, `the ledger ends at entry ${walk.next - 1}, but its latest checkpoint (${CHECKPOINT_FILE}) is entry ${read.entry.index}: entries were cut from the end`);
    if (walk.lastCheckpoint !== null && read.entry.index > walk.lastCheckpoint.index) return fail(CHECKPOINT_FILE, 1, `entry ${read.entry.index} in ${CHECKPOINT_FILE} is not a checkpoint of this ledger`);
  }
  return { ...report, ok: true };
}

/** The chain as a walk has it: the hash and index the next entry must name, the newest checkpoint, and the counts. */
interface Walk {
  head: string;
  next: number;
  report: VerifyReport;
  lastCheckpoint: LedgerEntry | null;
}

/** One line checked against the walk so far, which it then extends: its problem (with the entry's index when read), or null. */
function step(walk: Walk, line: string, publicKey: KeyObject, keyId: string, onEntry?: (entry: LedgerEntry) => void): { problem: string; index?: number } | null {
  const read = readEntry(line);
  if (!read.ok) return { problem: read.problem };
  const { entry } = read;
  const { next, report } = walk;
  if (entry.index !== next) return { problem: entry.index < next ? `index ${entry.index} comes after ${next - 1} (lines reordered or repeated)` : `index ${entry.index} where ${next} was due (entries removed)`, index: entry.index };
  if (entry.prev !== walk.head) return { problem: 'does not name the hash of the entry before it (an entry changed, removed or moved)', index: entry.index };
  if (entry.event.type === 'checkpoint') {
    if (entry.event.size !== entry.index || entry.event.head !== entry.prev) return { problem: 'a checkpoint that does not sign the chain as it stands', index: entry.index };
    if (entry.event.keyId !== keyId || !checkpointSigned(publicKey, entry)) {
      return { problem: entry.event.keyId !== keyId ? `a checkpoint signed by another key (${entry.event.keyId}, expected ${keyId})` : 'a checkpoint whose signature does not verify', index: entry.index };
    }
    report.checkpoints++;
    report.unsigned = 0;
    walk.lastCheckpoint = entry;
  } else {
    report.unsigned++;
  }
  onEntry?.(entry);
  walk.head = entry.hash;
  walk.next = entry.index + 1;
  report.entries = walk.next;
  return null;
}

/** `verifyLedger` over a source's one chain: every entry from the first, then its length against the store's own. */
async function verifySource(source: LedgerSource, publicKey: KeyObject, onEntry?: (entry: LedgerEntry) => void): Promise<VerifyReport> {
  const walk: Walk = { head: GENESIS, next: 0, report: { ok: false, entries: 0, segments: 0, checkpoints: 0, unsigned: 0, pruned: 0, first: null }, lastCheckpoint: null };
  const keyId = keyIdOf(publicKey);
  for await (const line of source.lines(0)) {
    const wrong = step(walk, line, publicKey, keyId, onEntry);
    if (wrong) return { ...walk.report, first: { file: source.name, line: walk.next + 1, ...wrong } };
  }
  const size = await source.size();
  if (size > walk.next) return { ...walk.report, first: { file: source.name, line: walk.next + 1, problem: `the ledger ends at entry ${walk.next - 1}, but the store says it holds ${size}: entries were cut from the end` } };
  return { ...walk.report, ok: true };
}

/**
 * A receipt checked against the ledger's files, reading only what proves it: its entry's line (found where the receipt
 * says, or by a scan for a receipt without `at`) and the lines after it up to the signed checkpoint that covers it,
 * each chained to the one before. The checkpoint signs the chain's head, and the head's hash covers every line back to
 * the entry, so the entry is in the signed ledger as it is. A receipt with a passkey's assertion is checked too
 * (`assertion-check.ts`), against `passkeyKey` (SPKI DER, base64url, pinned by the person) or the key the ledger
 * recorded when that passkey was added.
 */
export async function checkReceipt(place: LedgerPlace, publicKey: KeyObject, receipt: Receipt, passkeyKey?: string): Promise<{ ok: boolean; problem: string | null }> {
  let visitLines: (visit: (line: string) => string | null) => Promise<string | null>;
  if (typeof place === 'string') {
    const dir = path.join(place, LEDGER_DIR);
    const found = receipt.at ? { segment: receipt.at.segment, offset: receipt.at.offset } : await locate(dir, receipt.ledgerIndex);
    if (found === null) return { ok: false, problem: `no entry ${receipt.ledgerIndex} in the ledger` };
    visitLines = async (visit) => readLinesFrom(path.join(dir, segmentName(found.segment)), found.offset, visit);
  } else {
    visitLines = async (visit) => {
      for await (const line of place.lines(receipt.ledgerIndex)) {
        const answer = visit(line);
        if (answer !== null) return answer;
      }
      return null;
    };
  }
  const keyId = keyIdOf(publicKey);
  // Set inside the visitor: a holder, so the checks below see what it found.
  const seen: { decided: LedgerEntry | null; covered: boolean } = { decided: null, covered: false };
  let head = '';
  const problem = await visitLines((line) => {
    // Between the entry and the checkpoint only the chain matters: a line's hash over its own text, naming the one
    // before. Read from the line's fixed canonical tail, without parsing what the event says.
    if (seen.decided !== null && !isCheckpointLine(line)) {
      const tail = chainTail(line);
      if (tail === null) return 'a line that is not a ledger entry (a changed or torn line)';
      if (tail.prev !== head) return `entry ${tail.index} does not name the hash of the entry before it (an entry changed, removed or moved)`;
      if (sha256(tail.hashed) !== tail.hash) return `entry ${tail.index}: its hash does not match its text (the line was changed)`;
      head = tail.hash;
      return null;
    }
    const read = readEntry(line);
    if (!read.ok) return read.problem;
    const { entry } = read;
    if (seen.decided === null) {
      if (entry.index !== receipt.ledgerIndex || entry.hash !== receipt.entryHash) return `entry ${receipt.ledgerIndex} is not where the receipt says, or is not the one it names (another hash)`;
      seen.decided = entry;
      head = entry.hash;
      return null;
    }
    if (entry.prev !== head) return `entry ${entry.index} does not name the hash of the entry before it (an entry changed, removed or moved)`;
    head = entry.hash;
    if (entry.event.type !== 'checkpoint') return null;
    if (entry.event.size !== entry.index || entry.event.head !== entry.prev) return `entry ${entry.index}: a checkpoint that does not sign the chain as it stands`;
    if (entry.event.keyId !== keyId || !checkpointSigned(publicKey, entry)) return `entry ${entry.index}: a checkpoint not signed by the key ${keyId}`;
    seen.covered = true;
    return 'done';
  });
  if (problem !== null && problem !== 'done') return { ok: false, problem };
  const entry = seen.decided;
  if (entry === null) return { ok: false, problem: `no entry ${receipt.ledgerIndex} where the receipt says` };
  const { event } = entry;
  if (event.type !== 'request.decided' || event.requestHash !== receipt.requestHash || event.decisionHash !== receipt.decisionHash || event.decidedVia !== receipt.decidedVia || event.decidedBy !== receipt.decidedBy || event.decidedAt !== receipt.decidedAt) {
    return { ok: false, problem: `entry ${receipt.ledgerIndex} does not record the decision the receipt describes` };
  }
  if (!seen.covered) return { ok: false, problem: `entry ${receipt.ledgerIndex} is not covered by a signed checkpoint yet (the hub signs one within a minute)` };
  let key = passkeyKey;
  if (key === undefined && receipt.passkey) key = await addedKey(place, receipt.passkey.credentialId, receipt.ledgerIndex);
  const wrong = passkeyProblem(receipt, event, keyId, key);
  return wrong === null ? { ok: true, problem: null } : { ok: false, problem: wrong };
}

/**
 * `audit verify --receipt`: the whole ledger walked (every hash, every signature), then the receipt checked against it
 * (`checkReceipt`), a passkey's public key taken from the walk unless one was pinned.
 */
export async function verifyReceipt(place: LedgerPlace, publicKey: KeyObject, receipt: Receipt, passkeyKey?: string): Promise<{ ok: boolean; problem: string | null; report: VerifyReport }> {
  const added = new Map<string, string>();
  const report = await verifyLedger(place, publicKey, (entry) => {
    if (entry.event.type === 'passkey.added' && entry.index < receipt.ledgerIndex) added.set(entry.event.credentialId, entry.event.publicKey);
  });
  if (!report.ok) return { ok: false, problem: 'the ledger does not verify', report };
  const checked = await checkReceipt(place, publicKey, receipt, passkeyKey ?? (receipt.passkey ? (added.get(receipt.passkey.credentialId) ?? NO_KEY) : undefined));
  return { ...checked, report };
}

const HASH_FIELD = ',"hash":"';
const PREV_FIELD = ',"prev":"';

/**
 * A canonical entry line's end (`ledger-format.ts` `entryLine`: `…,"hash":"<64 hex>","index":<n>,"prev":"<64 hex>"}`):
 * its hash, index, the hash before it, and the text its hash is over (the line without its hash field). Null when the
 * line does not end that way.
 */
function chainTail(line: string): { hash: string; index: string; prev: string; hashed: string } | null {
  // `,"prev":"` + 64 hex digits + `"}` close every line; the hash field comes just before `,"index":<n>`. Hex is not
  // checked here: a hash that is not one never equals a digest, and the prev is compared with one.
  const prevAt = line.length - (PREV_FIELD.length + 64 + 2);
  const at = line.lastIndexOf(HASH_FIELD, prevAt);
  if (at === -1 || !line.startsWith(PREV_FIELD, prevAt) || !line.startsWith(INDEX_FIELD, at + HASH_FIELD.length + 65)) return null;
  return {
    hash: line.slice(at + HASH_FIELD.length, at + HASH_FIELD.length + 64),
    index: line.slice(at + HASH_FIELD.length + 65 + INDEX_FIELD.length, prevAt),
    prev: line.slice(prevAt + PREV_FIELD.length, line.length - 2),
    hashed: line.slice(0, at) + line.slice(at + HASH_FIELD.length + 65),
  };
}

const INDEX_FIELD = ',"index":';
const EVENT_FIELD = '"event":';

/**
 * Whether a canonical line holds a checkpoint: its event's keys are sorted, and only a checkpoint's starts with `head`
 * (`{"at":<ms>,"event":{"head":…`), so the test reads a few characters near the start instead of the whole line.
 */
function isCheckpointLine(line: string): boolean {
  const at = line.indexOf(EVENT_FIELD);
  return at !== -1 && line.startsWith('{"head":', at + EVENT_FIELD.length);
}

/** Said when the ledger never added the passkey a receipt names (and none was pinned). */
const NO_KEY = '';

/** Reads lines from `offset` on, 64 KiB at a time, until `visit` answers (a problem, or 'done'); null at the end. */
function readLinesFrom(file: string, offset: number, visit: (line: string) => string | null): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${path.basename(file)} is gone: removed by retention (ELICITLY_LEDGER_RETENTION_DAYS), or deleted` : `${path.basename(file)} cannot be read`;
  }
  try {
    const buffer = Buffer.alloc(64 * 1024);
    let position = offset;
    let rest = '';
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) return null;
      position += read;
      const text = rest + buffer.toString('utf8', 0, read);
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const answer = visit(line);
        if (answer !== null) return answer;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Where the entry of this index is, for a receipt that does not say: a scan of the segments. */
async function locate(dir: string, index: number): Promise<{ segment: number; offset: number } | null> {
  const numbers = existsSync(dir) ? (await readdir(dir)).map((n) => SEGMENT_FILE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b) : [];
  for (const n of numbers) {
    let offset = 0;
    const lines = createInterface({ input: createReadStream(path.join(dir, segmentName(n)), { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
      const at = offset;
      offset += Buffer.byteLength(line, 'utf8') + 1;
      const read = readEntry(line);
      if (read.ok && read.entry.index === index && read.entry.event.type !== 'checkpoint') {
        lines.close();
        return { segment: n, offset: at };
      }
    }
  }
  return null;
}

/** The public key the ledger recorded for a passkey added before `before`, by a scan; NO_KEY when it never was. */
async function addedKey(place: LedgerPlace, credentialId: string, before: number): Promise<string> {
  let key = NO_KEY;
  const take = (line: string) => {
    if (!line.includes('"passkey.added"')) return;
    const read = readEntry(line);
    if (read.ok && read.entry.index < before && read.entry.event.type === 'passkey.added' && read.entry.event.credentialId === credentialId) key = read.entry.event.publicKey;
  };
  if (typeof place !== 'string') {
    for await (const line of place.lines(0)) take(line);
    return key;
  }
  const dir = path.join(place, LEDGER_DIR);
  const numbers = existsSync(dir) ? (await readdir(dir)).map((n) => SEGMENT_FILE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b) : [];
  for (const n of numbers) {
    const lines = createInterface({ input: createReadStream(path.join(dir, segmentName(n)), { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) take(line);
  }
  return key;
}

function passkeyProblem(receipt: Receipt, event: Extract<LedgerEntry['event'], { type: 'request.decided' }>, hub: string, publicKey: string | undefined): string | null {
  const { passkey } = receipt;
  if (!passkey) return event.passkey ? `entry ${receipt.ledgerIndex} records a passkey the receipt leaves out` : null;
  const { requestId, hub: receiptHub, ...evidence } = passkey;
  if (!event.passkey || !isDeepStrictEqual(event.passkey, evidence) || event.id !== requestId) return `entry ${receipt.ledgerIndex} does not record the passkey assertion the receipt carries`;
  if (receiptHub !== hub) return `the passkey signed for the hub ${receiptHub}, not this ledger's key ${hub}`;
  if (publicKey === undefined || publicKey === NO_KEY) return `the passkey ${passkey.credentialId} was never added in this ledger: check it against the public key you pinned`;
  const challenge = decisionChallenge({ hub, requestId, requestHash: receipt.requestHash, decisionHash: receipt.decisionHash });
  const wrong = assertionProblem(evidence, { challenge, publicKey });
  return wrong === null ? null : `the passkey assertion does not hold: ${wrong}`;
}
