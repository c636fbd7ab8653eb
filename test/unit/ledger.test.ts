import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { entryLine, keyIdOf, signCheckpoint, type LedgerEvent } from '../../server/ledger/ledger-format.js';
import type { Receipt } from '../../shared/receipt.js';
import { LEDGER_DIR, LedgerStore, segmentName, type LedgerKey } from '../../server/ledger/ledger-store.js';
import { checkReceipt, verifyLedger } from '../../server/ledger/ledger-verify.js';
import { describeKey, keyChanges, type KeyDescriptor } from '../../server/ledger/decision-ledger.js';

// The ledger on disk, and `audit verify`'s walk over it: a clean ledger verifies; each way of tampering with it is
// named, at the first entry it breaks.
const keyPair = (): LedgerKey => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey };
};
const KEY = keyPair();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const event = (i: number): LedgerEvent => ({ type: 'request.collected', id: `el_${i}` });

/** A ledger of `n` events appended in batches of 7, a checkpoint every 10 entries, segments of 25. */
async function ledger(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-ledger-'));
  dirs.push(dir);
  let t = 1_800_000_000_000;
  const store = await LedgerStore.open({ dir, key: KEY, now: () => t++, checkpointEvery: 10, segmentEntries: 25 });
  for (let i = 0; i < n; i += 7) await store.append(Array.from({ length: Math.min(7, n - i) }, (_, j) => event(i + j)));
  await store.close();
  return dir;
}

const segmentFile = (dir: string, n: number) => join(dir, LEDGER_DIR, segmentName(n));
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').slice(0, -1);
const write = (file: string, all: string[]) => writeFileSync(file, `${all.join('\n')}\n`);

describe('the ledger verifies, and names the first thing wrong', () => {
  it('a clean ledger: every entry, every checkpoint signed, across sealed segments', async () => {
    const dir = await ledger(60);
    expect(readdirSync(join(dir, LEDGER_DIR)).filter((f) => f.startsWith('segment-')).length).toBeGreaterThan(1);
    const report = await verifyLedger(dir, KEY.publicKey);
    expect(report).toMatchObject({ ok: true, first: null, unsigned: 0 });
    expect(report.checkpoints).toBeGreaterThanOrEqual(5);
  });

  it('reopened, it goes on from where it was', async () => {
    const dir = await ledger(12);
    const store = await LedgerStore.open({ dir, key: KEY, checkpointEvery: 10, segmentEntries: 25 });
    const [placed] = await store.append([event(99)]);
    const entry = placed?.entry;
    await store.close();
    expect(entry?.index).toBeGreaterThan(12);
    expect((await verifyLedger(dir, KEY.publicKey)).ok).toBe(true);
  });

  it.each<[string, (dir: string) => void, RegExp]>([
    ['a flipped byte', (dir) => {
      const file = segmentFile(dir, 1);
      const all = lines(file);
      all[3] = (all[3] ?? '').replace('el_', 'eL_');
      write(file, all);
    }, /line 4: .*(hash does not match|canonical)/],
    ['a deleted line', (dir) => {
      const file = segmentFile(dir, 1);
      write(file, lines(file).filter((_, i) => i !== 5));
    }, /line 6: index 6 where 5 was due/],
    ['two lines swapped', (dir) => {
      const file = segmentFile(dir, 1);
      const all = lines(file);
      [all[2], all[3]] = [all[3] ?? '', all[2] ?? ''];
      write(file, all);
    }, /line 3: index 3 where 2 was due/],
    ['the tail cut', (dir) => {
      // The last segment that holds more than the checkpoint it opens with (a ledger closed right after sealing one
      // starts the next with that copy alone).
      const numbers = readdirSync(join(dir, LEDGER_DIR)).filter((f) => f.startsWith('segment-')).map((f) => Number(f.slice(8, 14))).sort((a, b) => b - a);
      const last = numbers.find((n) => lines(segmentFile(dir, n)).length > 1) ?? 1;
      const file = segmentFile(dir, last);
      write(file, lines(file).slice(0, 1));
      for (const n of numbers.filter((m) => m > last)) rmSync(segmentFile(dir, n));
    }, /entries were cut from the end/],
    ['a segment replaced', (dir) => {
      writeFileSync(segmentFile(dir, 2), readFileSync(segmentFile(dir, 1)));
    }, /does not open with the checkpoint that sealed the segment before it/],
  ])('%s', async (_name, tamper, named) => {
    const dir = await ledger(60);
    tamper(dir);
    const report = await verifyLedger(dir, KEY.publicKey);
    expect(report.ok).toBe(false);
    expect(`${report.first?.file} line ${report.first?.line}: ${report.first?.problem}`).toMatch(named);
  });

  it('a checkpoint signed by another key (the key rotated, or a forger) is named, with both key ids', async () => {
    const dir = await ledger(30);
    const report = await verifyLedger(dir, keyPair().publicKey);
    expect(report.ok).toBe(false);
    expect(report.first?.problem).toMatch(/a checkpoint signed by another key \([0-9a-f]{16}, expected [0-9a-f]{16}\)/);
  });

  it('a torn last line (a crash mid-append, never acknowledged) is cut at the next open, and the ledger goes on', async () => {
    const dir = await ledger(12);
    const file = segmentFile(dir, 1);
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"index":`);
    const store = await LedgerStore.open({ dir, key: KEY, checkpointEvery: 10, segmentEntries: 25 });
    await store.append([event(100)]);
    await store.close();
    expect((await verifyLedger(dir, KEY.publicKey)).ok).toBe(true);
  });
});

describe('retention: whole sealed segments go, the ledger kept verifies from a signed checkpoint', () => {
  it('removes the old sealed segments, never the one being written, says so in the ledger, and still verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-prune-'));
    dirs.push(dir);
    let t = 1_000;
    const store = await LedgerStore.open({ dir, key: KEY, now: () => t, checkpointEvery: 10, segmentEntries: 25 });
    const placed: Awaited<ReturnType<LedgerStore['append']>> = [];
    for (let i = 0; i < 80; i += 10) {
      placed.push(...(await store.append(Array.from({ length: 10 }, (_, j) => event(i + j)))));
      t += 1_000;
    }
    const segments = () => readdirSync(join(dir, LEDGER_DIR)).filter((f) => f.startsWith('segment-')).sort();
    const before = segments();
    expect(before.length).toBeGreaterThanOrEqual(3);
    // Older than t = 3,500: the segments whose last entry was written before then.
    const pruned = await store.prune(3_500);
    expect(pruned).toMatchObject({ first: 1 });
    const kept = segments();
    expect(kept[0]).toBe(segmentName((pruned?.last ?? 0) + 1));
    expect(kept.at(-1)).toBe(before.at(-1));
    await store.close();
    const report = await verifyLedger(dir, KEY.publicKey);
    expect(report).toMatchObject({ ok: true, pruned: pruned?.last });
    // A receipt whose segment went is named, not crashed on.
    const gone = placed[0];
    if (!gone) throw new Error('nothing appended');
    const receipt: Receipt = { ledgerIndex: gone.entry.index, at: { segment: gone.segment, offset: gone.offset }, entryHash: gone.entry.hash, requestHash: 'a'.repeat(64), decisionHash: 'b'.repeat(64), decidedVia: 'extension', decidedAt: 1, checkpoint: null, verify: 'test' };
    expect((await checkReceipt(dir, KEY.publicKey, receipt)).problem).toMatch(/removed by retention|cannot be read/);
    // Without its opening checkpoint, the first kept segment is not trusted.
    const first = segmentFile(dir, (pruned?.last ?? 0) + 1);
    write(first, lines(first).slice(1));
    expect((await verifyLedger(dir, KEY.publicKey)).first?.problem).toMatch(/does not open with a checkpoint/);
  });
});

describe('one receipt checked from its entry to the checkpoint that covers it (checkReceipt)', () => {
  const decided = { type: 'request.decided' as const, id: 'el_r', decision: 'approved' as const, decidedVia: 'extension', decidedAt: 5, requestHash: 'a'.repeat(64), decisionHash: 'b'.repeat(64) };

  /** 12 entries, the decision, 20 more (a checkpoint every 10, segments of 25): its receipt, as the hub makes one. */
  async function withReceipt(): Promise<{ dir: string; receipt: Receipt }> {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-receipt-'));
    dirs.push(dir);
    const store = await LedgerStore.open({ dir, key: KEY, checkpointEvery: 10, segmentEntries: 25 });
    await store.append(Array.from({ length: 12 }, (_, i) => event(i)));
    const [placed] = await store.append([decided]);
    await store.append(Array.from({ length: 20 }, (_, i) => event(100 + i)));
    await store.close();
    if (!placed) throw new Error('not appended');
    const receipt: Receipt = { ledgerIndex: placed.entry.index, at: { segment: placed.segment, offset: placed.offset }, entryHash: placed.entry.hash, requestHash: decided.requestHash, decisionHash: decided.decisionHash, decidedVia: 'extension', decidedAt: 5, checkpoint: null, verify: 'test' };
    return { dir, receipt };
  }

  it('holds where the receipt says, and found by a scan for a receipt without its place', async () => {
    const { dir, receipt } = await withReceipt();
    expect(await checkReceipt(dir, KEY.publicKey, receipt)).toEqual({ ok: true, problem: null });
    const { at: _at, ...placeless } = receipt;
    expect(await checkReceipt(dir, KEY.publicKey, placeless)).toEqual({ ok: true, problem: null });
  });

  it.each<[string, (dir: string, receipt: Receipt) => Receipt, RegExp]>([
    ['a place that is not its line', (_dir, r) => ({ ...r, at: { segment: r.at?.segment ?? 1, offset: (r.at?.offset ?? 0) + 1 } }), /not a ledger entry|not JSON|not where the receipt says/],
    ['another decision than the entry records', (_dir, r) => ({ ...r, decisionHash: 'c'.repeat(64) }), /does not record the decision the receipt describes/],
    ['a byte flipped between it and the checkpoint', (dir, r) => {
      const file = segmentFile(dir, r.at?.segment ?? 1);
      const all = lines(file);
      const i = all.findIndex((l) => l.includes('"el_101"'));
      all[i] = all[i]!.replace('"el_101"', '"el_1O1"');
      write(file, all);
      return r;
    }, /hash does not match its text/],
    ['a line deleted between it and the checkpoint', (dir, r) => {
      const file = segmentFile(dir, r.at?.segment ?? 1);
      write(file, lines(file).filter((l) => !l.includes('"el_101"')));
      return r;
    }, /does not name the hash of the entry before it/],
    ['a checkpoint signed by another key', (dir, r) => {
      const file = segmentFile(dir, r.at?.segment ?? 1);
      const all = lines(file);
      const i = all.findIndex((l, n) => n > all.findIndex((x) => x.includes('"el_r"')) && l.includes('"type":"checkpoint"}'));
      const other = keyPair();
      const entry = JSON.parse(all[i]!) as { at: number; index: number; prev: string; event: { head: string; size: number } };
      all[i] = entryLine(entry.index, entry.at, entry.prev, { type: 'checkpoint', size: entry.event.size, head: entry.event.head, keyId: keyIdOf(other.publicKey), signature: signCheckpoint(other.privateKey, entry.event.size, entry.event.head, entry.at) }).line;
      write(file, all);
      return r;
    }, /not signed by the key/],
    ['everything after it cut (no checkpoint covers it any more)', (dir, r) => {
      const file = segmentFile(dir, r.at?.segment ?? 1);
      const all = lines(file);
      write(file, all.slice(0, all.findIndex((l) => l.includes('"el_r"')) + 1));
      return r;
    }, /not covered by a signed checkpoint/],
  ])('%s is named', async (_name, tamper, expected) => {
    const { dir, receipt } = await withReceipt();
    const checked = await checkReceipt(dir, KEY.publicKey, tamper(dir, receipt));
    expect(checked.ok).toBe(false);
    expect(checked.problem).toMatch(expected);
  });
});

describe('what was shown is one hash, the same on every surface and in the hub', () => {
  it("the browsers' WebCrypto and the hub's node:crypto agree, and any change to what is shown changes it", async () => {
    const { shownHash } = await import('../../shared/shown-hash.js');
    const { requestHashOf } = await import('../../server/ledger/request-events.js');
    const { checkApprovalInput } = await import('../../shared/approval-input.js');
    const checked = checkApprovalInput({ message: 'Pay €1,200 to ACME?', context: { amount: 1200, payee: 'ACME' } });
    if (!checked.ok) throw new Error('fixture invalid');
    const view = { request: checked.request, renderedTemplate: '<p>€1,200</p>' };
    expect(await shownHash(view)).toBe(requestHashOf(view));
    expect(await shownHash({ ...view, renderedTemplate: '<p>€12,000</p>' })).not.toBe(requestHashOf(view));
    expect(await shownHash({ ...view, request: { ...view.request, message: 'Pay €1,200 to ACME!' } })).not.toBe(requestHashOf(view));
  });
});

describe('what the ledger says of one role\'s keys (keyChanges)', () => {
  const k = (keyId: string, extra: Partial<KeyDescriptor> = {}): KeyDescriptor => ({ keyId, fingerprint: 'a'.repeat(64), ...extra });
  const said = (...keys: KeyDescriptor[]) => new Map(keys.map((key) => [key.keyId, describeKey(key)]));
  it.each([
    { case: 'nothing said, nothing there', known: said(), now: [], events: [] },
    { case: 'a key appeared', known: said(), now: [k('k_1', { origin: 'chrome-extension://x', name: 'laptop' })], events: [{ type: 'key.added', role: 'extension', keyId: 'k_1', fingerprint: 'a'.repeat(64), origin: 'chrome-extension://x', name: 'laptop' }] },
    { case: 'the same keys', known: said(k('k_1')), now: [k('k_1')], events: [] },
    { case: 'a key went', known: said(k('k_1'), k('k_2')), now: [k('k_2')], events: [{ type: 'key.removed', role: 'extension', keyId: 'k_1' }] },
    {
      case: 'a key replaced under its id (another fingerprint): removed, then added',
      known: said(k('k_1')),
      now: [k('k_1', { fingerprint: 'b'.repeat(64) })],
      events: [{ type: 'key.removed', role: 'extension', keyId: 'k_1' }, { type: 'key.added', role: 'extension', keyId: 'k_1', fingerprint: 'b'.repeat(64) }],
    },
    { case: 'grants are part of a key', known: said(k('k_1')), now: [k('k_1', { grants: ['create'] })], events: [{ type: 'key.removed', role: 'extension', keyId: 'k_1' }, { type: 'key.added', role: 'extension', keyId: 'k_1', fingerprint: 'a'.repeat(64), grants: ['create'] }] },
  ])('$case', ({ known, now, events }) => {
    expect(keyChanges(known, 'extension', now)).toEqual(events);
  });
});
