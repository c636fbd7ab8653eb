import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../server/ledger/ledger-format.js';
import { LEDGER_DIR, LedgerStore, segmentName, type LedgerKey } from '../../server/ledger/ledger-store.js';
import { verifyLedger } from '../../server/ledger/ledger-verify.js';

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
    const [entry] = await store.append([event(99)]);
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
      const last = Math.max(...readdirSync(join(dir, LEDGER_DIR)).filter((f) => f.startsWith('segment-')).map((f) => Number(f.slice(8, 14))));
      const file = segmentFile(dir, last);
      write(file, lines(file).slice(0, 1));
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
