// The bug that made this a rule: a second agent's server process, joining as a relay, opened the hub's store, purged
// and compacted it and renamed a new journal over the one the hub kept appending to. Real processes, real journal.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalRecordSchema, type ApprovalRecord } from '../../server/approvals/approval-record.js';
import { JournalStore } from '../../server/store/journal-store.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const DAY_MS = 86_400_000;
const ENDED = 6000;
const dir = mkdtempSync(join(tmpdir(), 'elicitly-one-writer-'));
const journal = join(dir, 'requests.jsonl');
const port = freePort();
const agents: Harness[] = [];

afterAll(async () => {
  await Promise.allSettled(agents.map((a) => a.close()));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * ~6,000 ended requests, 3 days old, each written three times: purgeable for a 1-day retention, and compactable. Plain
 * JSON lines, as version 0.1 wrote them (the hub rewrites them with checksums when it opens the store).
 */
function seedJournal(): void {
  const checked = checkApprovalInput({ message: 'old request', context: { n: 1 } });
  if (!checked.ok) throw new Error('fixture invalid');
  const at = Date.now() - 3 * DAY_MS;
  const lines: string[] = [];
  for (let i = 0; i < ENDED; i++) {
    const base: ApprovalRecord = {
      id: `el_old_${i}`, updatedAt: at, kind: 'approval', status: 'pending', createdAt: at, expiresAt: at + 3_600_000,
      requester: { client: 'seed', pid: 1 }, request: checked.request, renderedTemplate: null,
    };
    const decided: ApprovalRecord = { ...base, status: 'approved', decidedAt: at + 1000, outcome: { decision: 'approved', action: 'submit', values: {}, idempotencyKey: `k${i}` } };
    const consumed: ApprovalRecord = { ...decided, status: 'consumed', consumedAt: at + 2000 };
    for (const record of [base, decided, consumed]) lines.push(`${JSON.stringify(ApprovalRecordSchema.parse(record))}\n`);
  }
  writeFileSync(journal, lines.join(''), { mode: 0o600 });
}

function fingerprint() {
  const stat = statSync(journal);
  return { inode: stat.ino, size: stat.size, sha256: createHash('sha256').update(readFileSync(journal)).digest('hex') };
}

describe('a relay never touches the store', () => {
  it('a second agent joining a hub whose store is purgeable and compactable leaves the files alone; every later ack survives', async () => {
    seedJournal();
    const hub = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_RETENTION_DAYS: '7' } });
    agents.push(hub);
    expect((await hub.callTool('elicit_status', { elicitationId: 'el_old_0' })).structuredContent).toEqual({ status: 'consumed' });
    const before = fingerprint();

    // Configured with a shorter retention, so that opening the store would purge all 6,000 requests and compact.
    const relay = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_RETENTION_DAYS: '1' } });
    agents.push(relay);
    expect((await relay.callTool('elicit_status', { elicitationId: 'el_old_1' })).structuredContent).toEqual({ status: 'consumed' });
    expect(fingerprint()).toEqual(before);

    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await relay.callTool('elicit_approval', { message: `new ${i}`, context: { i } });
      expect(created.isError).toBeFalsy();
      ids.push((created.structuredContent as { elicitationId: string }).elicitationId);
    }
    ext.close();
    await Promise.all(agents.splice(0).map((a) => a.close()));

    // Replaying the journal as the next hub will: every acknowledged request is there.
    const store = await JournalStore.open<ApprovalRecord>({ dir, parse: (raw) => ApprovalRecordSchema.safeParse(raw).data });
    expect(ids.filter((id) => store.get(id)?.status !== 'pending')).toEqual([]);
    expect(store.damage).toBeNull();
    await store.close();

    const next = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()) } });
    agents.push(next);
    for (const id of ids) expect((await next.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
  }, 60_000);
});
