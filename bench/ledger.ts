// `npm run bench` (issue 34, work in progress): the ledger's numbers. `audit verify` over 1,000,000 entries, a
// receipt checked, and creates/s of the hub's store with its ledger beside the same without (`ledger: false`).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalEngine } from '../server/approvals/approval-engine.js';
import { newElicitationId } from '../server/durable-request.js';
import { LedgerStore, type Placed } from '../server/ledger/ledger-store.js';
import { checkReceipt, verifyLedger } from '../server/ledger/ledger-verify.js';
import { checkApprovalInput } from '../shared/approval-input.js';
import type { Receipt } from '../shared/receipt.js';
import { record } from './metrics.mjs';

const ENTRIES = Number(process.env.ELICITLY_BENCH_LEDGER_ENTRIES ?? 1_000_000);
const CREATES = Number(process.env.ELICITLY_BENCH_LEDGER_CREATES ?? 20_000);

async function creates(ledger: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-bench-ledger-'));
  const engine = await ApprovalEngine.open({ dir, retentionMs: 86_400_000, ledger });
  try {
    let next = 0;
    const began = performance.now();
    await Promise.all(Array.from({ length: 50 }, async () => {
      while (next < CREATES) {
        const n = next++;
        const checked = checkApprovalInput({ message: `pending ${n}`, context: { n } });
        if (!checked.ok) throw new Error('the bench request does not validate');
        await engine.call('create', { id: newElicitationId(), request: checked.request, renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'bench', pid: process.pid } }, null);
      }
    }));
    return CREATES / ((performance.now() - began) / 1000);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function ledgerBench(): Promise<void> {
  // Alternating, so a slow moment of the machine falls on both.
  const withLedger: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < 3; i++) {
    without.push(await creates(false));
    withLedger.push(await creates(true));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const ratio = (median(withLedger) / median(without)) * 100;
  console.log(`ledger: creates/s of the hub's store, 50 in flight: ${median(withLedger).toFixed(0)} with the ledger, ${median(without).toFixed(0)} without (${ratio.toFixed(1)} %)`);
  record('ledger.creates_ratio', 'creates/s with the ledger, % of without', ratio, '%', 95, 'higher');

  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-bench-verify-'));
  try {
    const store = await LedgerStore.open({ dir, key: { privateKey, publicKey }, io: { sync: async () => undefined } });
    // One decision half-way in, right after a checkpoint (the farthest a receipt's entry can be from the checkpoint that
    // covers it: the worst case of the check), as a real receipt names it, in a ledger of a million entries.
    let decided: Placed | undefined;
    const decision = { type: 'request.decided' as const, id: 'el_bench_receipt', decision: 'approved' as const, decidedVia: 'extension', decidedAt: 1, requestHash: 'a'.repeat(64), decisionHash: 'b'.repeat(64) };
    for (let i = 0; i < ENTRIES; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, ENTRIES - i) }, (_, j) => ({ type: 'request.collected' as const, id: `el_${i + j}` }));
      if (i === Math.floor(ENTRIES / 2000) * 1000) [decided] = await store.append([decision]);
      await store.append(batch);
    }
    await store.close();
    const began = performance.now();
    const report = await verifyLedger(dir, publicKey);
    const seconds = (performance.now() - began) / 1000;
    console.log(`ledger: audit verify of ${report.entries} entries: ${seconds.toFixed(2)} s (${report.ok ? 'ok' : 'BROKEN'})`);
    record('ledger.verify_1m', `audit verify, ${report.entries.toLocaleString('en')} entries`, seconds, 's', 5);

    if (!decided) throw new Error('the bench ledger has no decision');
    const receipt: Receipt = {
      ledgerIndex: decided.entry.index, at: { segment: decided.segment, offset: decided.offset }, entryHash: decided.entry.hash,
      requestHash: decision.requestHash, decisionHash: decision.decisionHash, decidedVia: decision.decidedVia, decidedAt: decision.decidedAt, checkpoint: null, verify: 'bench',
    };
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const checked = await checkReceipt(dir, publicKey, receipt);
      times.push(performance.now() - t);
      if (!checked.ok) throw new Error(`the bench receipt did not verify: ${checked.problem}`);
    }
    console.log(`ledger: a receipt checked against that ledger (its entry, 1,000 lines to the checkpoint covering it), median of 200: ${median(times).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms`);
    record('ledger.receipt_ms', 'receipt verification in a 1M-entry ledger, median', median(times), 'ms', 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) await ledgerBench();
