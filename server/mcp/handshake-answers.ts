// The build's recorded answers to the handshake (scripts/record-handshake.mjs), read by the bin before anything else is
// loaded. Plain checks, no zod: zod is what the fast start avoids loading (server/mcp/fast-handshake.ts).
import { readFileSync } from 'node:fs';
import type { HandshakeIndex, RecordedAnswer } from './fast-handshake.js';

/** The index, and a reader of one answer by its number. */
export interface RecordedHandshake {
  answers: HandshakeIndex;
  answer: (n: number) => RecordedAnswer | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isAnswer = (value: unknown): value is RecordedAnswer => Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string');

/** Each era's versions, each surface, each method: the number of an answer among `count`. */
function indexed(value: unknown, count: number): value is HandshakeIndex['legacy'] {
  return (
    isRecord(value) &&
    Object.values(value).every(
      (surfaces) =>
        isRecord(surfaces) &&
        (['plain', 'apps'] as const).every((surface) => isRecord(surfaces[surface]) && Object.values(surfaces[surface]).every((i) => Number.isInteger(i) && (i as number) >= 0 && (i as number) < count)),
    )
  );
}

const readJson = (file: URL): unknown => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
};

/**
 * The build's recorded answers in `dir` (index.json, and each answer in <n>.json), or undefined when the index is missing
 * or not what this code reads: then the SDK answers everything. An answer that cannot be read is left to the SDK too.
 */
export function readHandshakeAnswers(dir: URL): RecordedHandshake | undefined {
  const parsed = readJson(new URL('index.json', dir));
  if (!isRecord(parsed) || parsed.format !== 1 || !Number.isInteger(parsed.count)) return undefined;
  const { legacy, modern, count } = parsed;
  if (!indexed(legacy, count as number) || !indexed(modern, count as number)) return undefined;
  return {
    answers: { format: 1, legacy, modern },
    answer: (n) => {
      const answer = readJson(new URL(`${n}.json`, dir));
      return isAnswer(answer) ? answer : undefined;
    },
  };
}
