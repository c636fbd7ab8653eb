import { clip } from './field-issues.js';

/** Clamps a caller's number into [min, max]; a missing value takes the default. */
export function clamp(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, value));
}

/** Error reasons shown to a model stay short: long stacks crowd out the answer. */
const MAX_REASON_CHARS = 300;

export function clipReason(reason: string): string {
  return clip(reason, MAX_REASON_CHARS);
}
