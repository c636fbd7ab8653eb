import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { crc32, encodeLine } from '../../server/store/journal-line.js';
import type { StoreIo, StoredRecord } from '../../server/store/journal-store.js';
import { JournalStore, StoredRecordSchema } from '../../server/store/journal-store.js';

// Captured rather than printed: several tests assert that a bad row was reported, not silently eaten.
const { logSpy } = vi.hoisted(() => ({ logSpy: vi.fn() }));
vi.mock('../../server/log.js', () => ({ log: logSpy }));

interface Item extends StoredRecord {
  value: number;
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STORE_MODULE = new URL('../../server/store/journal-store.ts', import.meta.url).href;

let tmp: string;

beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'elicitly-store-'));
  logSpy.mockClear();
});

afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function item(id: string, value: number): Item {
  return { id, value, updatedAt: Date.now() };
}

async function journalLines(file: string): Promise<string[]> {
  const text = await fs.readFile(file, 'utf8');
  return text.split('\n').filter((line) => line !== '');
}

function warnings(): string[] {
  return logSpy.mock.calls.filter((call) => call[0] === 'warn').map((call) => String(call[1]));
}

describe('JournalStore basics', () => {
  it('round-trips put/get/all/size and survives reopen', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    await store.put(item('a', 1));
    await store.put(item('b', 2));
    await store.put(item('c', 3));
    expect(store.size()).toBe(3);
    expect(store.get('b')?.value).toBe(2);
    expect(store.get('missing')).toBeUndefined();
    expect(store.all().map((r) => r.id)).toEqual(['a', 'b', 'c']);
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.size()).toBe(3);
    expect(again.all()).toEqual(store.all());
    await again.close();
  });

  it('last write wins, keeping the order of first appearance', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    await store.put(item('a', 1));
    await store.put(item('b', 1));
    await store.put(item('a', 2));
    await store.put(item('a', 3));
    expect(store.get('a')?.value).toBe(3);
    expect(store.all().map((r) => r.id)).toEqual(['a', 'b']);
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.get('a')?.value).toBe(3);
    expect(again.all().map((r) => r.id)).toEqual(['a', 'b']);
    await again.close();
  });

  it('delete survives reopen, and a re-put after delete comes back', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    await store.put(item('a', 1));
    await store.put(item('b', 1));
    await store.delete('a');
    expect(store.get('a')).toBeUndefined();
    expect(store.size()).toBe(1);
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.get('a')).toBeUndefined();
    expect(again.all().map((r) => r.id)).toEqual(['b']);
    await again.put(item('a', 9));
    await again.close();

    const third = await JournalStore.open<Item>({ dir: tmp });
    expect(third.all().map((r) => [r.id, r.value])).toEqual([['b', 1], ['a', 9]]);
    await third.close();
  });

  it('holds a snapshot of each put, so later caller mutations do not diverge from disk', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    const record = item('a', 1);
    await store.put(record);
    record.value = 99;
    expect(store.get('a')?.value).toBe(1);
    await store.close();
  });

  it('rejects records without an id and writes after close', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    await expect(store.put({ id: '', value: 1, updatedAt: 0 })).rejects.toThrow(/id/);
    expect(store.size()).toBe(0);
    await store.close();
    await expect(store.put(item('a', 1))).rejects.toThrow(/closed/);
    await expect(store.delete('a')).rejects.toThrow(/closed/);
    await store.close(); // idempotent
  });

  it('close() flushes writes that were still pending', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    const puts = Array.from({ length: 50 }, (_, i) => store.put(item(`r${i}`, i)));
    await store.close();
    await Promise.all(puts);
    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.size()).toBe(50);
    await again.close();
  });
});

describe('JournalStore permissions', () => {
  it('creates the dir 0700 and the journal 0600', async () => {
    const dir = path.join(tmp, 'nested', 'state');
    const store = await JournalStore.open<Item>({ dir });
    await store.put(item('a', 1));
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(path.join(dir, 'requests.jsonl'))).mode & 0o777).toBe(0o600);
    await store.close();
  });

  it('tightens an existing dir and journal, and keeps 0600 across compaction', async () => {
    const dir = path.join(tmp, 'loose');
    await fs.mkdir(dir);
    await fs.chmod(dir, 0o755);
    const file = path.join(dir, 'custom.jsonl');
    await fs.writeFile(file, `${JSON.stringify(item('a', 1))}\n`);
    await fs.chmod(file, 0o644);

    const store = await JournalStore.open<Item>({ dir, file: 'custom.jsonl' });
    expect(store.get('a')?.value).toBe(1);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    await store.compact();
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    await store.close();
  });
});

describe('JournalStore refuses journal files it must not trust', () => {
  it('finding 3: a journal others can write (0666) is refused, naming the file and the rule', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    await fs.writeFile(file, `${JSON.stringify(item('forged', 1))}\n`);
    await fs.chmod(file, 0o666);
    await expect(JournalStore.open<Item>({ dir: tmp })).rejects.toThrow(`${file} is writable by group or others (mode 0666); refusing it`);
  });

  it.skipIf(process.getuid?.() !== 0)('finding 3: a journal owned by another user is refused, naming the file and the rule', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    await fs.writeFile(file, `${JSON.stringify(item('forged', 1))}\n`, { mode: 0o600 });
    await fs.chown(file, 65534, 65534);
    await expect(JournalStore.open<Item>({ dir: tmp })).rejects.toThrow(`${file} belongs to user 65534, not to you (0); refusing it`);
  });

  it('finding 5: a symlinked journal is refused by name, not with a raw ELOOP', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const elsewhere = path.join(tmp, 'elsewhere');
    await fs.writeFile(elsewhere, '');
    await fs.symlink(elsewhere, file);
    await expect(JournalStore.open<Item>({ dir: tmp })).rejects.toThrow(`${file} is a symbolic link; refusing it`);
  });

  it('finding 16: compaction never writes through a file planted at a temp name (a hard link to a victim)', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const victim = path.join(tmp, 'victim.txt');
    await fs.writeFile(victim, 'the person\'s own file\n', { mode: 0o600 });
    // The name compaction used to open with O_TRUNC.
    await fs.link(victim, `${file}.tmp`);
    const store = await JournalStore.open<Item>({ dir: tmp });
    await store.put(item('a', 1));
    await store.put(item('a', 2));
    await store.compact();
    expect(store.stats.compactions).toBe(1);
    await store.close();
    expect(await fs.readFile(victim, 'utf8')).toBe('the person\'s own file\n');
    expect((await fs.stat(victim)).nlink).toBe(2);
    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.get('a')?.value).toBe(2);
    await again.close();
    // The compaction's own temp file is gone; the planted one is left alone.
    expect((await fs.readdir(tmp)).filter((name) => name.endsWith('.tmp'))).toEqual(['requests.jsonl.tmp']);
  });
});

describe('JournalStore acknowledges only what is on disk', () => {
  /** An fsync that waits until the test lets it go; `reached` resolves once the first one waits (bounded). */
  function gatedSync(): { io: StoreIo; release: () => void; started: () => number; reached: (timeoutMs: number) => Promise<void> } {
    let open: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    let arrived: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    return {
      io: {
        sync: async (handle) => {
          calls += 1;
          arrived();
          await gate;
          await handle.sync();
        },
      },
      release: () => {
        open();
        gate = Promise.resolve();
      },
      started: () => calls,
      reached: (timeoutMs) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no fsync within ${timeoutMs} ms`)), timeoutMs);
          void first.then(() => (clearTimeout(timer), resolve()));
        }),
    };
  }

  it('changes memory only after the fsync that made the change durable', async () => {
    const gated = gatedSync();
    const store = await JournalStore.open<Item>({ dir: tmp, io: gated.io });
    let acknowledged = false;
    const put = store.put(item('a', 1)).then(() => (acknowledged = true));
    await gated.reached(2000);
    expect(gated.started()).toBe(1);
    expect(store.get('a')).toBeUndefined();
    expect(acknowledged).toBe(false);
    gated.release();
    await put;
    expect(store.get('a')?.value).toBe(1);
    await store.close();
  });

  it('a failed fsync rejects the put, leaves memory as it was, refuses later writes and reports the failure once', async () => {
    let fail = false;
    const store = await JournalStore.open<Item>({
      dir: tmp,
      io: { sync: async (handle) => (fail ? Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })) : handle.sync()) },
    });
    await store.put(item('a', 1));
    const failures: string[] = [];
    store.onFailure((error) => failures.push(error.message));
    fail = true;
    await expect(store.put(item('a', 2))).rejects.toThrow(/EIO/);
    expect(store.get('a')?.value).toBe(1);
    expect(store.failed?.message).toMatch(/EIO/);
    await expect(store.put(item('b', 1))).rejects.toThrow(/unusable/);
    expect(failures).toEqual(['EIO: i/o error, fsync']);
    await store.close();
  });
});

describe('JournalStore damage is detected, moved aside and reported, never silent', () => {
  const file = () => path.join(tmp, 'requests.jsonl');
  const quarantineFile = () => `${file()}.quarantine`;
  async function quarantined(): Promise<{ line: number; reason: string; text: string }[]> {
    const text = await fs.readFile(quarantineFile(), 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { line: number; reason: string; text: string });
  }
  function errors(): string[] {
    return logSpy.mock.calls.filter((call) => call[0] === 'error').map((call) => String(call[1]));
  }
  async function writeThree(): Promise<void> {
    const store = await JournalStore.open<Item>({ dir: tmp });
    for (const [id, value] of [['a', 1], ['b', 22], ['c', 3]] as const) await store.put(item(id, value));
    await store.close();
  }

  it('every line carries a CRC-32 of its JSON', async () => {
    await writeThree();
    for (const line of await journalLines(file())) {
      const [crc, json] = [line.slice(0, 8), line.slice(9)];
      expect(crc).toBe(crc32(Buffer.from(json)).toString(16).padStart(8, '0'));
    }
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    // Lines are checksummed by zlib's CRC-32 where Node has it and by the table otherwise: the same number over UTF-8.
    expect(crc32(Buffer.from('é✓😀 {"a":1}'))).toBe(2715813704);
    expect(encodeLine('é✓😀 {"a":1}')).toBe(`${(2715813704).toString(16).padStart(8, '0')} é✓😀 {"a":1}\n`);
  });

  it('a flipped byte in an acknowledged line: quarantined byte for byte, logged as an error, the rest kept', async () => {
    await writeThree();
    const lines = await journalLines(file());
    const damaged = lines[1]!.replace('"value":22', '"value":23');
    await fs.writeFile(file(), `${lines[0]}\n${damaged}\n${lines[2]}\n`);

    const store = await JournalStore.open<Item>({ dir: tmp });
    expect(store.all().map((r) => r.id)).toEqual(['a', 'c']);
    expect(store.damage).toEqual({ quarantined: 1, quarantineFile: quarantineFile() });
    expect(await quarantined()).toMatchObject([{ line: 2, reason: 'checksum', text: damaged }]);
    expect(errors().some((m) => m.includes('DAMAGED'))).toBe(true);
    await store.close();

    // Moved aside once: the journal was rewritten without it, so the next open finds nothing new to quarantine.
    logSpy.mockClear();
    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.damage).toBeNull();
    expect(await quarantined()).toHaveLength(1);
    expect(errors()).toEqual([]);
    await again.close();
  });

  it('a complete, valid last line without its newline is kept, and the next append does not glue onto it', async () => {
    await writeThree();
    const text = await fs.readFile(file(), 'utf8');
    await fs.writeFile(file(), text.slice(0, -1));

    const store = await JournalStore.open<Item>({ dir: tmp });
    expect(store.all().map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(store.damage).toBeNull();
    expect(warnings()).toEqual([]);
    await store.put(item('d', 4));
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.all().map((r) => [r.id, r.value])).toEqual([['a', 1], ['b', 22], ['c', 3], ['d', 4]]);
    expect(again.damage).toBeNull();
    await again.close();
  });

  it('a truncated file: the torn last line is moved aside with a warning, everything before it kept', async () => {
    await writeThree();
    const text = await fs.readFile(file(), 'utf8');
    await fs.writeFile(file(), text.slice(0, -12));

    const store = await JournalStore.open<Item>({ dir: tmp });
    expect(store.all().map((r) => r.id)).toEqual(['a', 'b']);
    expect(await quarantined()).toMatchObject([{ line: 3, reason: 'torn_tail', text: text.split('\n')[2]!.slice(0, -11) }]);
    expect(warnings().some((m) => m.includes('torn'))).toBe(true);
    await store.put(item('e', 5));
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.all().map((r) => r.id)).toEqual(['a', 'b', 'e']);
    expect(again.damage).toBeNull();
    await again.close();
  });

  it('a garbage middle line and rows the caller refuses are quarantined too, with their reasons', async () => {
    const ItemSchema = StoredRecordSchema.extend({ value: z.number() });
    const parse = (raw: unknown): Item | undefined => {
      if (typeof raw === 'object' && raw !== null && 'id' in raw && raw.id === 'boom') throw new Error('validator bug');
      const result = ItemSchema.safeParse(raw);
      return result.success ? result.data : undefined;
    };
    const rows = [item('good', 1), { id: 'bad', value: 'not a number', updatedAt: 1 }, { id: 'boom', value: 3, updatedAt: 1 }];
    await fs.writeFile(file(), [...rows.map((r) => JSON.stringify(r)), 'not json at all {', ''].join('\n'));
    const store = await JournalStore.open<Item>({ dir: tmp, parse });
    expect(store.all().map((r) => r.id)).toEqual(['good']);
    expect((await quarantined()).map((q) => [q.line, q.reason])).toEqual([[2, 'invalid'], [3, 'invalid'], [4, 'malformed']]);
    await store.close();
  });

  it('reads lines written before checksums and rewrites them with one', async () => {
    await fs.writeFile(file(), `${JSON.stringify(item('old', 1))}\n${JSON.stringify({ $delete: 'gone' })}\n`);
    const store = await JournalStore.open<Item>({ dir: tmp });
    expect(store.get('old')?.value).toBe(1);
    expect(store.damage).toBeNull();
    const lines = await journalLines(file());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^[0-9a-f]{8} \{"id":"old"/);
    await store.close();
  });

  it('treats only an exact {"$delete": id} as a tombstone', async () => {
    const store = await JournalStore.open<StoredRecord>({ dir: tmp });
    await store.put({ id: 'x', updatedAt: 1 });
    await store.put({ id: 'y', updatedAt: 1, $delete: 'x' });
    await store.close();
    const again = await JournalStore.open<StoredRecord>({ dir: tmp });
    expect(again.all().map((r) => r.id)).toEqual(['x', 'y']);
    await again.close();
  });
});

describe('JournalStore group commit', () => {
  it('makes 1000 concurrent puts durable with far fewer fsyncs than puts', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const store = await JournalStore.open<Item>({ dir: tmp });
    const started = performance.now();
    await Promise.all(Array.from({ length: 1000 }, (_, i) => store.put(item(`r${i}`, i))));
    const elapsedMs = performance.now() - started;
    const putsPerSecond = 1000 / (elapsedMs / 1000);

    expect(store.stats.flushes).toBeGreaterThanOrEqual(1);
    expect(store.stats.flushes).toBeLessThan(1000);
    expect(store.stats.flushes).toBeLessThanOrEqual(5);
    expect(store.stats.lines).toBe(1000);
    expect(putsPerSecond).toBeGreaterThanOrEqual(2000);
    await store.close();

    expect(await journalLines(file)).toHaveLength(1000);
    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.size()).toBe(1000);
    for (let i = 0; i < 1000; i += 1) expect(again.get(`r${i}`)?.value).toBe(i);
    await again.close();
  });

  it('batches puts that arrive while a flush is in flight into the next flush', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp });
    const first = store.put(item('first', 0));
    // Queued after the loop has started its first write: must all share one later flush.
    await Promise.resolve();
    await Promise.resolve();
    const rest = Array.from({ length: 100 }, (_, i) => store.put(item(`r${i}`, i)));
    await Promise.all([first, ...rest]);
    expect(store.stats.flushes).toBeLessThanOrEqual(2);
    await store.close();
  });
});

describe('JournalStore compaction', () => {
  it('compacts automatically and keeps the latest values', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const store = await JournalStore.open<Item>({ dir: tmp, compactAfterLines: 50 });
    let maxLines = 0;
    // 200 updates of 10 records, one batch of 10 at a time.
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.put(item(`r${i}`, round))));
      maxLines = Math.max(maxLines, (await journalLines(file)).length);
    }
    expect(store.stats.compactions).toBeGreaterThanOrEqual(1);
    expect(maxLines).toBeLessThanOrEqual(10 + 50 + 10);
    expect((await journalLines(file)).length).toBeLessThanOrEqual(10 + 50 + 10);
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.size()).toBe(10);
    for (let i = 0; i < 10; i += 1) expect(again.get(`r${i}`)?.value).toBe(19);
    await again.close();
    expect((await fs.readdir(tmp)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('still compacts under continuous load, when the queue is never empty after a flush', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const store = await JournalStore.open<Item>({ dir: tmp, compactAfterLines: 50 });
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        for (let n = 0; n < 40; n += 1) await store.put(item(`w${w}`, n));
      }),
    );
    expect(store.stats.compactions).toBeGreaterThanOrEqual(1);
    expect((await journalLines(file)).length).toBeLessThanOrEqual(20 + 50 + 20);
    await store.close();
    const again = await JournalStore.open<Item>({ dir: tmp });
    for (let w = 0; w < 20; w += 1) expect(again.get(`w${w}`)?.value).toBe(39);
    await again.close();
  });

  it('explicit compact() leaves one line per live record and drops tombstones', async () => {
    const file = path.join(tmp, 'requests.jsonl');
    const store = await JournalStore.open<Item>({ dir: tmp });
    for (let i = 0; i < 5; i += 1) await store.put(item(`r${i}`, i));
    await store.put(item('r0', 100));
    await store.delete('r1');
    await store.compact();
    expect(await journalLines(file)).toHaveLength(4);
    expect(store.stats.lines).toBe(4);
    await store.put(item('r5', 5));
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.all().map((r) => [r.id, r.value])).toEqual([['r0', 100], ['r2', 2], ['r3', 3], ['r4', 4], ['r5', 5]]);
    await again.close();
  });

  it('does not lose puts and deletes that arrive during compaction', async () => {
    const store = await JournalStore.open<Item>({ dir: tmp, compactAfterLines: 5 });
    for (let i = 0; i < 20; i += 1) await store.put(item(`base${i}`, i));
    const ops: Promise<void>[] = [];
    const compaction = store.compact();
    for (let i = 0; i < 200; i += 1) {
      ops.push(store.put(item(`during${i % 30}`, i)));
      if (i % 7 === 0) ops.push(store.delete(`base${i % 20}`));
      if (i % 50 === 0) await Promise.resolve();
    }
    await Promise.all([compaction, ...ops]);
    const expected = store.all();
    await store.close();

    const again = await JournalStore.open<Item>({ dir: tmp });
    expect(again.all()).toEqual(expected);
    expect(again.get('during19')?.value).toBe(199); // 199 % 30 === 19: the very last put
    await again.close();
  });
});

describe('JournalStore crash durability', () => {
  it('keeps every acknowledged put across a SIGKILL', async () => {
    const dir = path.join(tmp, 'crash');
    const childScript = path.join(tmp, 'child.mts');
    // Small compactAfterLines and a hot key so the kill can also land mid-compaction.
    await fs.writeFile(
      childScript,
      `import { JournalStore } from ${JSON.stringify(STORE_MODULE)};
const store = await JournalStore.open({ dir: process.argv[2], compactAfterLines: 40 });
let next = 0;
async function worker(w: number): Promise<never> {
  for (;;) {
    const id = 'w' + w + '-' + next++;
    await store.put({ id, updatedAt: Date.now(), pad: 'x'.repeat(200) });
    process.stdout.write(id + '\\n');
    await store.put({ id: 'hot-' + w, updatedAt: Date.now(), n: next });
  }
}
await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(worker));
`,
    );

    const child = spawn(process.execPath, ['--import', 'tsx', childScript, dir], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ELICITLY_LOG_LEVEL: 'error' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const ackedIds = (): string[] => stdout.split('\n').slice(0, -1); // the text after the last newline may be half-written

    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${ackedIds().length} acks within 15 s; stderr: ${stderr}`)), 15_000);
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk;
          if (ackedIds().length >= 200) {
            clearTimeout(timer);
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.stderr.on('data', (chunk: string) => {
          stderr += chunk;
        });
        child.on('exit', (code, signal) => {
          clearTimeout(timer);
          if (signal !== 'SIGKILL') reject(new Error(`child exited early (code ${code}, signal ${signal}); stderr: ${stderr}`));
        });
      });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    // Acks already in the pipe when the kill landed still count: the child printed them only after durability.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);

    const acked = ackedIds();
    expect(acked.length).toBeGreaterThanOrEqual(200);
    const store = await JournalStore.open({ dir });
    const missing = acked.filter((id) => store.get(id) === undefined);
    expect(missing).toEqual([]);
    await store.close();
  }, 20_000);
});
