// Which tool call a Claude Code `PermissionRequest` hook is asked about. Its stdin has no `tool_use_id` (measured on
// 2.1.332: PreToolUse, PostToolUse and PostToolUseFailure carry it, PermissionRequest does not), but the call's
// `assistant` line is in the session's transcript (`transcript_path`, JSON lines) before the hook starts. Knowing the id
// lets the PostToolUse hook of the same call find the request and withdraw it when the person answered in the terminal.
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';

/** The end of a transcript read: the call being asked about is among its newest lines. */
export const TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024;

/**
 * How long a hook looks for its call: the line is usually there before the hook starts, but Claude Code under load was
 * seen to start the hook first (1 clean-clone CI run in 6 before any retry; with 9 reads 50 ms apart, still 1 run in 4
 * on 2026-12-05), and a prompt without its id cannot be withdrawn when the person answers it in the terminal. Bounded,
 * so a call whose line never comes costs the prompt at most this much (1 s; the hub is reached meanwhile).
 */
export const TRANSCRIPT_RETRY = { attempts: 20, pauseMs: 50 } as const;

const ContentSchema = z.array(z.looseObject({ type: z.string(), id: z.string().optional(), name: z.string().optional(), input: z.unknown().optional(), tool_use_id: z.string().optional() }));
const LineSchema = z.looseObject({ type: z.enum(['assistant', 'user']), message: z.looseObject({ content: ContentSchema }) });

/**
 * The id of the newest `tool_use` named `tool` with exactly this input that has no `tool_result` yet, in a transcript's
 * text; null when there is none, or when that call's id cannot be told (not JSON, another shape). Pure.
 */
export function toolUseIdIn(text: string, tool: string, input: unknown): string | null {
  const open = new Map<string, number>();
  let order = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"tool_')) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      continue; // The first line of a tail read is usually cut.
    }
    const parsed = LineSchema.safeParse(raw);
    if (!parsed.success) continue;
    for (const part of parsed.data.message.content) {
      if (part.type === 'tool_use' && part.id !== undefined && part.name === tool && isDeepStrictEqual(part.input, input)) open.set(part.id, order++);
      else if (part.type === 'tool_result' && part.tool_use_id !== undefined) open.delete(part.tool_use_id);
    }
  }
  let newest: string | null = null;
  let at = -1;
  for (const [id, seen] of open) if (seen > at) [newest, at] = [id, seen];
  return newest;
}

/** The same, read from the file's last `TRANSCRIPT_TAIL_BYTES`; null when it cannot be read. Bounded in time and memory. */
export function toolUseIdOf(path: string | null | undefined, tool: string, input: unknown): string | null {
  if (!path) return null;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, TRANSCRIPT_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, size - length);
    return toolUseIdIn(buffer.toString('utf8', 0, read), tool, input);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * `toolUseIdOf`, read again while the call's line has not been written yet: at most `attempts` reads with `pause`
 * between them (injectable, so a test can write the line between two reads). Never waits when there is no transcript.
 */
export async function findToolUseId(
  path: string | null | undefined,
  tool: string,
  input: unknown,
  retry: { readonly attempts: number; readonly pauseMs: number } = TRANSCRIPT_RETRY,
  pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<string | null> {
  if (!path) return null;
  for (let attempt = 1; ; attempt++) {
    const id = toolUseIdOf(path, tool, input);
    if (id !== null || attempt >= retry.attempts || !existsSync(path)) return id;
    await pause(retry.pauseMs);
  }
}
