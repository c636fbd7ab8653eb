// `npm run bench` (issue 34, work in progress): the ledger's numbers. `audit verify` over 1,000,000 entries, a
// receipt checked, and creates/s of the hub's store with its ledger beside the same without (`ledger: false`).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalEngine } from '../server/approvals/approval-engine.js';
import { newElicitationId } from '../server/durable-request.js';
import { ledgerKey } from '../server/ledger/ledger-key.js';
import { LedgerStore } from '../server/ledger/ledger-store.js';
import { verifyLedger, verifyReceipt } from '../server/ledger/ledger-verify.js';
import { checkApprovalInput } from '../shared/approval-input.js';
import { ReceiptSchema } from '../shared/receipt.js';
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
    for (let i = 0; i < ENTRIES; i += 1000) await store.append(Array.from({ length: Math.min(1000, ENTRIES - i) }, (_, j) => ({ type: 'request.collected' as const, id: `el_${i + j}` })));
    await store.close();
    const began = performance.now();
    const report = await verifyLedger(dir, publicKey);
    const seconds = (performance.now() - began) / 1000;
    console.log(`ledger: audit verify of ${report.entries} entries: ${seconds.toFixed(2)} s (${report.ok ? 'ok' : 'BROKEN'})`);
    record('ledger.verify_1m', `audit verify, ${report.entries.toLocaleString('en')} entries`, seconds, 's', 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // One receipt, from a real decision, checked against its (small) ledger: what an auditor's check of one costs.
  const small = mkdtempSync(join(tmpdir(), 'elicitly-bench-receipt-'));
  try {
    const engine = await ApprovalEngine.open({ dir: small, retentionMs: 86_400_000 });
    const checked = checkApprovalInput({ message: 'ship it?', context: {} });
    if (!checked.ok) throw new Error('the bench request does not validate');
    await engine.call('create', { id: 'el_bench_receipt', request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'bench', pid: 1 } }, null);
    await engine.decide({ elicitationId: 'el_bench_receipt', idempotencyKey: 'k', decision: 'approved' }, 'extension');
    const result = await engine.call('result', { id: 'el_bench_receipt' }, null);
    await engine.close();
    const receipt = ReceiptSchema.parse(result.ok && 'receipt' in result.value ? result.value.receipt : null);
    const key = ledgerKey(small).publicKey;
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await verifyReceipt(small, key, receipt);
      times.push(performance.now() - t);
    }
    console.log(`ledger: a receipt verified (against a 4-entry ledger), median of 200: ${median(times).toFixed(3)} ms`);
    record('ledger.receipt_ms', 'receipt verification, median', median(times), 'ms', 1);
  } finally {
    rmSync(small, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) await ledgerBench();
