// The rules file under a slow and a failing fsync: nothing is acknowledged or read before it is on disk, and after a
// failed fsync the file refuses every later write (its owner steps down and reopens it from disk).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RULES_FILE, RulesFile } from '../../server/store/rules-file.js';
import { RuleSchema, type Rule } from '../../shared/rules.js';
import { FaultIo } from '../helpers/fault-io.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function rule(n: number): Rule {
  return { id: `rule_${n.toString(16).padStart(16, '0')}`, effect: 'allow', match: { tool: 'Bash', commandPrefix: `npm run task${n}` }, createdAt: 1, expiresAt: null };
}

async function openRules(io: FaultIo) {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-rules-file-'));
  dirs.push(dir);
  const file = await RulesFile.open<Rule>({ dir, io, max: 500, parse: (raw) => RuleSchema.safeParse(raw).data });
  return { dir, file };
}

const onDisk = (dir: string) => (JSON.parse(readFileSync(join(dir, RULES_FILE), 'utf8')) as { rules: Rule[] }).rules;

describe('rules.json under a slow and a failing fsync', () => {
  it('a change held in fsync is neither answered nor read until it is durable', async () => {
    const io = new FaultIo();
    const { dir, file } = await openRules(io);
    await file.replace([rule(1)]);
    io.hold();
    let done = false;
    const change = file.replace([rule(1), rule(2)]).then(() => (done = true));
    await io.blocked();
    expect(done).toBe(false);
    expect(file.all()).toEqual([rule(1)]);
    io.release();
    await change;
    expect(file.all()).toEqual([rule(1), rule(2)]);
    expect(onDisk(dir)).toEqual([rule(1), rule(2)]);
  });

  it('a failed fsync: the change is refused, memory and disk keep the old list, no temp file is left, and every later write is refused', async () => {
    const io = new FaultIo();
    const { dir, file } = await openRules(io);
    await file.replace([rule(1)]);
    const failures: Error[] = [];
    file.onFailure((error) => failures.push(error));
    io.fail();
    await expect(file.replace([rule(1), rule(2)])).rejects.toThrow(/EIO/);
    expect(file.all()).toEqual([rule(1)]);
    expect(onDisk(dir)).toEqual([rule(1)]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(failures).toHaveLength(1);
    expect(file.failed?.message).toMatch(/EIO/);
    // Refused without trying: a retried fsync could claim durability it does not have.
    const syncs = io.syncs;
    await expect(file.replace([])).rejects.toThrow(/EIO/);
    expect(io.syncs).toBe(syncs);
    expect(onDisk(dir)).toEqual([rule(1)]);
  });
});
