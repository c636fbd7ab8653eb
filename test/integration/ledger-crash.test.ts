// The journal is written first and acknowledges; the ledger follows, and a receipt waits for it. A failure of either (a
// crash between the two, a disk error) leaves them disagreeing until the next open, which makes the ledger say what
// the journal holds: nothing acknowledged is missing from it, and nothing the journal never kept is in it.
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, truncateSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { ledgerKey } from '../../server/ledger/ledger-key.js';
import { verifyLedger } from '../../server/ledger/ledger-verify.js';
import type { StoreIo } from '../../server/store/journal-store.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { shownHash } from '../../shared/shown-hash.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-ledger-crash-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An fsync that fails for the files whose path matches, once armed: the disk under one of the two stores giving way. */
class FailingFor implements StoreIo {
  armed = false;
  constructor(private readonly path: RegExp) {}
  readonly sync = async (handle: FileHandle): Promise<void> => {
    if (this.armed && this.path.test(readlinkSync(`/proc/self/fd/${handle.fd}`))) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    await handle.sync();
  };
}

const open = (io?: StoreIo) => ApprovalEngine.open({ dir, retentionMs: 86_400_000, io, ledgerCheckpoint: { every: 1000, ms: 60_000 } });

async function create(engine: ApprovalEngine, id: string) {
  const checked = checkApprovalInput({ message: id, context: { id } });
  if (!checked.ok) throw new Error('fixture invalid');
  return engine.call('create', { id, request: checked.request, renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'test', pid: 1 } }, null);
}

interface Line {
  index: number;
  event: { type: string; id?: string; event?: string; decision?: string };
}
const ledgerLines = () =>
  readdirSync(join(dir, 'ledger')).filter((f) => f.startsWith('segment-')).sort().flatMap((f) => readFileSync(join(dir, 'ledger', f), 'utf8').trim().split('\n')).map((l) => JSON.parse(l) as Line);
const ledgerEvents = () => ledgerLines().map((l) => l.event);

it.skipIf(process.platform !== 'linux')('the ledger write failed after the journal kept the decision: no receipt then; the next open appends it, and its receipt comes', async () => {
  const io = new FailingFor(/\/ledger\/segment-/);
  const first = await open(io);
  const failures: string[] = [];
  first.onFailure((error) => failures.push(error.message));
  expect((await create(first, 'el_crash_0001')).ok).toBe(true);
  io.armed = true;
  // The journal has it: acknowledged.
  expect(await first.decide({ elicitationId: 'el_crash_0001', idempotencyKey: 'k1', decision: 'approved' }, 'extension')).toMatchObject({ ok: true, value: { ok: true } });
  // The receipt waits for the ledger, which refused: the hub steps down, and no receipt names a missing entry.
  expect(await first.call('result', { id: 'el_crash_0001' }, null)).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  expect(failures).toEqual(['EIO: i/o error, fsync']);
  await first.close();

  const second = await open();
  const result = await second.call('result', { id: 'el_crash_0001' }, null);
  await second.close();
  expect(result.ok && 'receipt' in result.value && result.value.receipt?.decidedVia).toBe('extension');
  expect(ledgerEvents().filter((e) => e.id === 'el_crash_0001').map((e) => e.type)).toEqual(['request.created', 'request.decided', 'request.collected']);
  expect(await verifyLedger(dir, ledgerKey(dir).publicKey)).toMatchObject({ ok: true });
});

it.skipIf(process.platform !== 'linux')('the journal write failed: the ledger never holds that decision, and the next one is the one its receipt names', async () => {
  const io = new FailingFor(/\/requests\.jsonl$/);
  const first = await open(io);
  expect((await create(first, 'el_crash_0002')).ok).toBe(true);
  const journal = join(dir, 'requests.jsonl');
  const kept = statSync(journal).size;
  io.armed = true;
  const decided = await first.decide({ elicitationId: 'el_crash_0002', idempotencyKey: 'k2', decision: 'rejected' }, 'extension');
  expect(decided.ok).toBe(false);
  await first.close();
  // The crash: what the failed fsync did not make durable is gone.
  truncateSync(journal, kept);

  const second = await open();
  expect(await second.call('status', { id: 'el_crash_0002' }, null)).toMatchObject({ ok: true, value: { status: 'pending' } });
  // Decided again, the other way: the receipt names this decision, not the one the journal never kept.
  expect(await second.decide({ elicitationId: 'el_crash_0002', idempotencyKey: 'k3', decision: 'approved' }, 'extension')).toMatchObject({ ok: true });
  const result = await second.call('result', { id: 'el_crash_0002' }, null);
  await second.close();
  const events = ledgerEvents().filter((e) => e.id === 'el_crash_0002');
  expect(events.map((e) => e.type)).toEqual(['request.created', 'request.decided', 'request.collected']);
  const approved = ledgerLines().find((l) => l.event.type === 'request.decided' && l.event.id === 'el_crash_0002' && l.event.decision === 'approved');
  expect(result.ok && 'receipt' in result.value ? result.value.receipt?.ledgerIndex : null).toBe(approved?.index);
  expect(await verifyLedger(dir, ledgerKey(dir).publicKey)).toMatchObject({ ok: true });
});

it('a decision sent with the hash of what was shown: refused when it is not the stored request, taken when it is', async () => {
  const engine = await open();
  expect((await create(engine, 'el_shown_0001')).ok).toBe(true);
  const view = await engine.call('view', { id: 'el_shown_0001' }, null);
  if (!view.ok) throw new Error('no view');
  const stale = await shownHash({ ...view.value, request: { ...view.value.request, message: 'something else' } });
  expect(await engine.decide({ elicitationId: 'el_shown_0001', idempotencyKey: 'k1', decision: 'approved', shownHash: stale }, 'extension')).toMatchObject({
    ok: true,
    value: { ok: false, reason: 'shown_mismatch', status: 'pending', issues: [expect.objectContaining({ path: 'shownHash', rule: 'shown_mismatch' })] },
  });
  expect(await engine.decide({ elicitationId: 'el_shown_0001', idempotencyKey: 'k2', decision: 'approved', shownHash: await shownHash(view.value) }, 'extension')).toMatchObject({ ok: true, value: { ok: true, status: 'approved' } });
  await engine.close();
});
