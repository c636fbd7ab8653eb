// Which tool call a Claude Code PermissionRequest hook is about (its stdin has no tool_use_id), and the marks of the
// prompts hooks wait on, which the PostToolUse hooks' guard looks at.
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRANSCRIPT_RETRY, TRANSCRIPT_TAIL_BYTES, findToolUseId, toolUseIdIn, toolUseIdOf } from '../../server/hook/transcript.js';
import { WaitingPrompts, promptRequestId } from '../../server/hook/waiting-prompts.js';

const use = (id: string, name: string, input: unknown) => JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] } });
const result = (id: string) => JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] } });
const touch = { command: 'touch x', description: 'touch' };

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('toolUseIdIn: the call a prompt is about', () => {
  it.each([
    ['the one call', [use('t1', 'Bash', touch)], 't1'],
    ['the newest of two identical calls without a result', [use('t1', 'Bash', touch), use('t2', 'Bash', touch)], 't2'],
    ['not one that already has its result', [use('t1', 'Bash', touch), use('t2', 'Bash', touch), result('t2')], 't1'],
    ['none when every match has its result', [use('t1', 'Bash', touch), result('t1')], null],
    ['not another tool with the same input', [use('t1', 'Edit', touch)], null],
    ['not the same tool with another input', [use('t1', 'Bash', { ...touch, command: 'touch y' })], null],
    ['parallel calls: the one with this input', [JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 'a', name: 'Bash', input: { command: 'ls' } }, { type: 'tool_use', id: 'b', name: 'Bash', input: touch }] } })], 'b'],
    ['a cut first line and lines of other kinds are passed over', ['"cut": "tool_use" }', JSON.stringify({ type: 'system', subtype: 'tool_use' }), use('t1', 'Bash', touch)], 't1'],
    ['none in an empty transcript', [], null],
  ] as const)('%s', (_name, lines, expected) => {
    expect(toolUseIdIn(lines.join('\n'), 'Bash', touch)).toBe(expected);
  });

  it('reads only the end of a long transcript, and nothing when there is no file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-transcript-'));
    dirs.push(dir);
    const path = join(dir, 'long.jsonl');
    // The call first, then more than the tail of other lines: out of reach, as a call that old is not the one asked.
    writeFileSync(path, `${use('old', 'Bash', touch)}\n${'x'.repeat(TRANSCRIPT_TAIL_BYTES)}\n${use('new', 'Bash', touch)}\n`);
    expect(toolUseIdOf(path, 'Bash', touch)).toBe('new');
    expect(toolUseIdOf(join(dir, 'missing.jsonl'), 'Bash', touch)).toBeNull();
    expect(toolUseIdOf(undefined, 'Bash', touch)).toBeNull();
  });
});

describe('findToolUseId: a call whose line is written after the hook started', () => {
  const transcript = (lines: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-transcript-'));
    dirs.push(dir);
    const path = join(dir, 'session.jsonl');
    writeFileSync(path, lines.map((line) => `${line}\n`).join(''));
    return path;
  };

  it('reads again until the line is there (written during the second pause)', async () => {
    const path = transcript([use('older', 'Edit', touch)]);
    const pauses: number[] = [];
    const id = await findToolUseId(path, 'Bash', touch, TRANSCRIPT_RETRY, async (ms) => {
      pauses.push(ms);
      if (pauses.length === 2) appendFileSync(path, `${use('late', 'Bash', touch)}\n`);
    });
    expect(id).toBe('late');
    expect(pauses).toEqual([TRANSCRIPT_RETRY.pauseMs, TRANSCRIPT_RETRY.pauseMs]);
  });

  it('gives up after the bounded number of reads when the line never comes', async () => {
    const path = transcript([use('other', 'Bash', { command: 'ls' })]);
    let pauses = 0;
    const id = await findToolUseId(path, 'Bash', touch, { attempts: 4, pauseMs: 10 }, async () => {
      pauses++;
    });
    expect(id).toBeNull();
    expect(pauses).toBe(3);
  });

  it('does not wait without a transcript, or when the line is there at once', async () => {
    let pauses = 0;
    const count = async () => {
      pauses++;
    };
    expect(await findToolUseId(undefined, 'Bash', touch, TRANSCRIPT_RETRY, count)).toBeNull();
    expect(await findToolUseId(join(tmpdir(), 'elicitly-no-such-transcript.jsonl'), 'Bash', touch, TRANSCRIPT_RETRY, count)).toBeNull();
    expect(await findToolUseId(transcript([use('t1', 'Bash', touch)]), 'Bash', touch, TRANSCRIPT_RETRY, count)).toBe('t1');
    expect(pauses).toBe(0);
  });
});

describe('promptRequestId and the marks of waited-on prompts', () => {
  it('the same id from the PermissionRequest and the PostToolUse hook of one call; another for any other call or session', () => {
    const id = promptRequestId('claude-code', 'session', 'toolu_1');
    expect(id).toMatch(/^el_p[A-Za-z0-9_-]{22}$/);
    expect(promptRequestId('claude-code', 'session', 'toolu_1')).toBe(id);
    expect(promptRequestId('claude-code', 'session', 'toolu_2')).not.toBe(id);
    expect(promptRequestId('claude-code', 'other', 'toolu_1')).not.toBe(id);
    // The parts cannot run into each other.
    expect(promptRequestId('claude-code', 'a', 'bc')).not.toBe(promptRequestId('claude-code', 'ab', 'c'));
  });

  it('a mark says a live hook waits; one whose hook is gone is not waiting and is swept', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'elicitly-waiting-')), 'waiting-prompts');
    dirs.push(dir);
    const marks = new WaitingPrompts(dir);
    expect(marks.waiting('el_pa')).toBe(false);
    expect(marks.mark('el_pa')).toBe(true);
    expect(marks.waiting('el_pa')).toBe(true);
    // A hook killed with SIGKILL leaves its mark behind: a pid that no longer runs.
    expect(marks.mark('el_pdead', 2 ** 22 + 1)).toBe(true);
    expect(marks.waiting('el_pdead')).toBe(false);
    expect(readdirSync(dir)).toEqual(['el_pa']);
    marks.mark('el_pdead2', 2 ** 22 + 3);
    marks.sweep();
    expect(readdirSync(dir)).toEqual(['el_pa']);
    marks.unmark('el_pa');
    expect(readdirSync(dir)).toEqual([]);
    // Never a path: an id that is not one of ours is not written.
    expect(marks.mark('../escape')).toBe(false);
  });
});
