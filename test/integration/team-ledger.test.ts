// The team's ledger in its database (server/ledger/pg-ledger.ts): one chain for every hub, each change's entries
// appended in that change's own transaction, signed with the team's key. Real PostgreSQL in a throw-away cluster
// (test/helpers/pg-cluster.ts), real engines opened the way the hub opens them (`teamStores`), never a mock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { keyIdOf, readEntry } from '../../server/ledger/ledger-format.js';
import { verifyLedger, verifyReceipt } from '../../server/ledger/ledger-verify.js';
import { ledgerSource, withTeamLedger } from '../../server/ledger/pg-ledger.js';
import { requestHashOf } from '../../server/ledger/request-events.js';
import { teamStores } from '../../server/serve-mcp.js';
import { PgDirectory } from '../../server/store/pg-directory.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { decisionChallenge, decisionCore, decisionHash } from '../../shared/passkey.js';
import { ReceiptSchema, type Receipt } from '../../shared/receipt.js';
import { postgresBin, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

const required = process.env.ELICITLY_REQUIRE_POSTGRES === '1';
let cluster: PgCluster | undefined;
let databases = 0;

async function database(): Promise<string> {
  cluster ??= startPgCluster();
  const name = `team_ledger_${databases++}`;
  const admin = postgres(cluster.url, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return cluster.url.replace(/\/elicitly$/, `/${name}`);
}

afterAll(() => cluster?.stop());

const eventually = async (check: () => boolean | Promise<boolean>, ms: number) => {
  const until = Date.now() + ms;
  while (!(await check()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  return check();
};

const approval = (() => {
  const checked = checkApprovalInput({ message: 'Deploy?', context: { service: 'api' } });
  if (!checked.ok) throw new Error('fixture');
  return checked.request;
})();

interface Hub {
  engine: ApprovalEngine;
  directory: PgDirectory;
  dir: string;
}

/** A hub's engine and directory on `url`, opened as the role election opens them. */
async function openHub(url: string, checkpoint = { every: 1000, ms: 200 }): Promise<Hub> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-team-ledger-'));
  const directory = await PgDirectory.open({ url });
  const engine = await ApprovalEngine.open({ dir, retentionMs: 86_400_000, ...(await teamStores(url, directory, { checkpoint })) });
  return { engine, directory, dir };
}

async function closeHub(hub: Hub): Promise<void> {
  await hub.engine.close();
  await hub.directory.close();
  rmSync(hub.dir, { recursive: true, force: true });
}

/** Every line of the team's ledger, parsed, in order. */
async function entries(url: string) {
  return withTeamLedger(url, async (source) => {
    const all = [];
    for await (const line of source.lines(0)) {
      const read = readEntry(line);
      if (!read.ok) throw new Error(read.problem);
      all.push(read.entry);
    }
    return all;
  });
}

describe.skipIf(postgresBin() === null && !required)('the team\'s ledger in its database', () => {
  it('three hubs: one chain, one signing key; a request decided on two hubs at once has one decision entry; any hub\'s receipt verifies', async () => {
    const url = await database();
    const hubs = await Promise.all([0, 1, 2].map(() => openHub(url)));
    try {
      // Made once under the directory row's lock: every hub signs with the same key.
      const keys = await Promise.all(hubs.map((h) => h.directory.ledgerKey()));
      expect(new Set(keys.map((k) => keyIdOf(k.publicKey))).size).toBe(1);
      const key = keys[0];
      if (!key) throw new Error('key');

      const perHub = 20;
      const ids = hubs.flatMap((_, h) => Array.from({ length: perHub }, (_, i) => `el_t${h}_${i}`));
      await Promise.all(hubs.map((hub, h) => Promise.all(Array.from({ length: perHub }, async (_, i) => {
        const created = await hub.engine.call('create', { id: `el_t${h}_${i}`, request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null);
        expect(created.ok).toBe(true);
      }))));
      expect(await eventually(() => hubs.every((hub) => hub.engine.pendingCount() === ids.length), 10_000)).toBe(true);
      // Each request decided at once on the next two hubs, one approving, one rejecting: one wins.
      const outcomes = await Promise.all(ids.map((id, n) => {
        const [x, y] = [hubs[(n + 1) % 3], hubs[(n + 2) % 3]];
        if (!x || !y) throw new Error('hubs');
        return Promise.all([
          x.engine.decide({ elicitationId: id, idempotencyKey: `${id}-x`, decision: 'approved' }, 'extension'),
          y.engine.decide({ elicitationId: id, idempotencyKey: `${id}-y`, decision: 'rejected' }, 'extension'),
        ]);
      }));
      for (const pair of outcomes) expect(pair.filter((o) => o.ok && o.value.ok).length).toBe(1);

      const ledger = await entries(url);
      const count = (type: string) => ledger.filter((e) => e.event.type === type).length;
      expect(count('request.created')).toBe(ids.length);
      expect(count('request.decided')).toBe(ids.length);
      expect(new Set(ledger.flatMap((e) => (e.event.type === 'request.decided' ? [e.event.id] : []))).size).toBe(ids.length);
      // What each decision entry says is what the request's row says.
      const admin = postgres(url, { max: 1, onnotice: () => undefined });
      const rows = await admin<{ id: string; body: string }[]>`select id, body from elicitly_requests`;
      await admin.end();
      const stored = new Map(rows.map((r) => [r.id, (JSON.parse(r.body) as { outcome?: { decision: string } }).outcome?.decision]));
      for (const e of ledger) if (e.event.type === 'request.decided') expect(e.event.decision).toBe(stored.get(e.event.id));

      // A receipt read on a hub that did not decide, once a checkpoint covers it (the timers' hub signs within 200 ms).
      const id = ids[0] ?? '';
      const reader = hubs[0];
      if (!reader) throw new Error('hub');
      let receipt: Receipt | undefined;
      expect(await eventually(async () => {
        const result = await reader.engine.call('result', { id }, null);
        if (!result.ok || !('receipt' in result.value)) return false;
        receipt = ReceiptSchema.parse(result.value.receipt);
        return receipt.checkpoint !== null;
      }, 10_000)).toBe(true);
      if (!receipt) throw new Error('receipt');
      const checked = await withTeamLedger(url, (source) => verifyReceipt(source, key.publicKey, receipt as Receipt));
      expect(checked.problem).toBeNull();
      expect(checked.report).toMatchObject({ ok: true });
      expect(checked.report.checkpoints).toBeGreaterThan(0);
    } finally {
      await Promise.all(hubs.map(closeHub));
    }
    // Closing signed what was left: the whole chain verifies with nothing unsigned.
    const directory = await PgDirectory.open({ url });
    const key = await directory.ledgerKey();
    await directory.close();
    expect(await withTeamLedger(url, (source) => verifyLedger(source, key.publicKey))).toMatchObject({ ok: true, unsigned: 0 });
  }, 60_000);

  it('the hub that runs the timers signs checkpoints; when it is gone the next to lead signs what comes after', async () => {
    const url = await database();
    const hubs = await Promise.all([0, 1].map(() => openHub(url, { every: 1000, ms: 300 })));
    const key = await hubs[0]?.directory.ledgerKey();
    if (!key) throw new Error('key');
    const head = async () => {
      const admin = postgres(url, { max: 1, onnotice: () => undefined });
      const [row] = await admin<{ idx: string; checkpoint_idx: string | null }[]>`select idx, checkpoint_idx from elicitly_ledger_head`;
      await admin.end();
      return { size: Number(row?.idx), signed: row?.checkpoint_idx === null ? -1 : Number(row?.checkpoint_idx) };
    };
    const create = (hub: Hub, id: string) => hub.engine.call('create', { id, request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null);
    try {
      const leader = await eventually(() => hubs.some((h) => h.engine.leads()), 5000) ? hubs.find((h) => h.engine.leads()) : undefined;
      const other = hubs.find((h) => h !== leader);
      if (!leader || !other) throw new Error('a leader and another hub');
      expect((await create(other, 'el_one')).ok).toBe(true);
      // Signed by the leader within its cadence, though the entry is another hub's.
      expect(await eventually(async () => { const h = await head(); return h.signed === h.size - 1; }, 5000)).toBe(true);
      await closeHub(leader);
      hubs.splice(hubs.indexOf(leader), 1);
      expect(await eventually(() => other.engine.leads(), 5000)).toBe(true);
      expect((await create(other, 'el_two')).ok).toBe(true);
      expect(await eventually(async () => { const h = await head(); return h.signed === h.size - 1; }, 5000)).toBe(true);
      expect(await withTeamLedger(url, (source) => verifyLedger(source, key.publicKey))).toMatchObject({ ok: true, unsigned: 0 });
    } finally {
      await Promise.all(hubs.map(closeHub));
    }
  }, 30_000);

  it('a change and its entries commit together or not at all: a ledger that refuses the append leaves the request unwritten', async () => {
    const url = await database();
    const hub = await openHub(url);
    const admin = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      expect((await hub.engine.call('create', { id: 'el_before', request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null)).ok).toBe(true);
      await admin.unsafe(`create function refuse() returns trigger language plpgsql as $$ begin raise exception 'ledger refused'; end $$;
        create trigger refuse before insert on elicitly_ledger for each row execute function refuse()`);
      const refused = await hub.engine.call('create', { id: 'el_refused', request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null);
      expect(refused).toMatchObject({ ok: false, error: { code: 'unavailable' } });
      expect(await admin`select id from elicitly_requests order by id`).toEqual([{ id: 'el_before' }]);
    } finally {
      await admin.unsafe('drop trigger if exists refuse on elicitly_ledger');
      await admin.end();
      await closeHub(hub);
    }
    expect((await entries(url)).filter((e) => 'id' in e.event && e.event.id === 'el_refused')).toEqual([]);
  }, 30_000);

  it('audit verify names a changed entry, and entries cut from the end', async () => {
    const url = await database();
    const hub = await openHub(url);
    const key = await hub.directory.ledgerKey();
    try {
      for (const id of ['el_a', 'el_b', 'el_c']) expect((await hub.engine.call('create', { id, request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null)).ok).toBe(true);
    } finally {
      await closeHub(hub);
    }
    const admin = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      expect(await withTeamLedger(url, (source) => verifyLedger(source, key.publicKey))).toMatchObject({ ok: true });
      await admin`update elicitly_ledger set line = replace(line, '"el_b"', '"el_x"') where request_id = 'el_b'`;
      expect(await withTeamLedger(url, (source) => verifyLedger(source, key.publicKey))).toMatchObject({ ok: false, first: { file: 'table elicitly_ledger', line: 2, problem: expect.stringMatching(/hash does not match/) } });
      await admin`update elicitly_ledger set line = replace(line, '"el_x"', '"el_b"') where request_id = 'el_b'`;
      const [last] = await admin<{ idx: string }[]>`select max(idx) as idx from elicitly_ledger`;
      await admin`delete from elicitly_ledger where idx = ${last?.idx ?? 0}`;
      expect(await withTeamLedger(url, (source) => verifyLedger(source, key.publicKey))).toMatchObject({ ok: false, first: { problem: expect.stringMatching(/cut from the end/) } });
    } finally {
      await admin.end();
    }
  }, 30_000);

  it('audit\'s reads of the team\'s ledger are bounded: a table held by a lock is refused in time, not waited on for ever', async () => {
    const url = await database();
    const hub = await openHub(url);
    const key = await hub.directory.ledgerKey();
    await closeHub(hub);
    const admin = postgres(url, { max: 1, onnotice: () => undefined });
    const reader = postgres(url, { max: 1, onnotice: () => undefined });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const locking = admin.begin(async (tx) => {
      await tx`lock table elicitly_ledger in access exclusive mode`;
      await held;
    });
    try {
      await eventually(async () => (await reader<{ n: string }[]>`select count(*) as n from pg_locks where relation = 'elicitly_ledger'::regclass and mode = 'AccessExclusiveLock' and granted`)[0]?.n === '1', 5000);
      const began = Date.now();
      await expect(verifyLedger(ledgerSource(reader, 300), key.publicKey)).rejects.toThrow(/did not answer within 300 ms/);
      expect(Date.now() - began).toBeLessThan(5000);
    } finally {
      release();
      await locking;
      await Promise.all([admin.end(), reader.end({ timeout: 1 })]);
    }
  }, 30_000);

  it('a passkey registered through one hub decides on another; the receipt verifies with the team\'s key, its passkey read from the ledger', async () => {
    const url = await database();
    const [a, b] = await Promise.all([openHub(url, { every: 2, ms: 60_000 }), openHub(url, { every: 2, ms: 60_000 })]);
    if (!a || !b) throw new Error('hubs');
    try {
      const authenticator = new SoftAuthenticator(EXTENSION_ORIGIN, EXTENSION_ORIGIN);
      const { nonce } = a.engine.passkeys.nonce();
      expect(await a.engine.passkeys.register(EXTENSION_ORIGIN, { nonce, registration: authenticator.register(nonce), label: 'laptop' })).toMatchObject({ ok: true });
      expect(await eventually(() => b.engine.passkeys.credentials().some((c) => c.id === authenticator.id), 5000)).toBe(true);
      const key = await b.directory.ledgerKey();
      expect((await b.engine.call('create', { id: 'el_pk', request: approval, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 }, assurance: 'passkey' }, null)).ok).toBe(true);
      const view = b.engine.pendingViews().find((v) => v.elicitationId === 'el_pk');
      if (!view) throw new Error('pending on b');
      const decision = { decision: 'approved' as const };
      const core = decisionCore(view.request, decision);
      if (!core.ok) throw new Error('decision');
      // One key for the team: the challenge names it, whichever hub checks the assertion.
      const passkey = authenticator.assert(decisionChallenge({ hub: keyIdOf(key.publicKey), requestId: 'el_pk', requestHash: requestHashOf(view), decisionHash: decisionHash(core.core) }));
      expect(await b.engine.decide({ elicitationId: 'el_pk', idempotencyKey: 'k-pk', ...decision, passkey }, 'extension')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
      let receipt: Receipt | undefined;
      expect(await eventually(async () => {
        const result = await a.engine.call('result', { id: 'el_pk' }, null);
        if (!result.ok || !('receipt' in result.value)) return false;
        receipt = ReceiptSchema.parse(result.value.receipt);
        return receipt.checkpoint !== null;
      }, 10_000)).toBe(true);
      if (!receipt?.passkey) throw new Error('a receipt with its passkey');
      expect((await withTeamLedger(url, (source) => verifyReceipt(source, key.publicKey, receipt as Receipt))).problem).toBeNull();
      const other = new SoftAuthenticator(EXTENSION_ORIGIN, EXTENSION_ORIGIN);
      expect((await withTeamLedger(url, (source) => verifyReceipt(source, key.publicKey, receipt as Receipt, other.spki))).problem).toMatch(/signature does not verify/);
    } finally {
      await Promise.all([closeHub(a), closeHub(b)]);
    }
  }, 30_000);
});
