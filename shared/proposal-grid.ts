// What the elicit_proposal review grid derives rather than receives (seed 004 "Derived behavior"):
// highlights, default inclusion, the required lock, and the header/double-click actions.
// Pure and immutable so the extension's UI state is a fold over these functions and easy to test.
import type { ProposalRequest } from './approval-input.js';

export interface GridRow {
  key: string;
  title: string;
  proposed: unknown;
  included: boolean;
  locked: boolean;
}

/** A blank cell: what a form leaves behind for "no value", whatever the field type. */
export function isEmptyValue(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
}

function canonical(v: unknown): string {
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * Equality as the reviewer sees it: every blank is the same blank (so a create's null Current
 * equals an empty multiselect), and multiselect values are sets, since option order means nothing.
 */
export function valuesEqual(a: unknown, b: unknown): boolean {
  const ea = isEmptyValue(a);
  const eb = isEmptyValue(b);
  if (ea || eb) return ea && eb;
  if (Array.isArray(a) && Array.isArray(b)) {
    const sa = new Set(a.map(canonical));
    const sb = new Set(b.map(canonical));
    return sa.size === sb.size && [...sa].every((x) => sb.has(x));
  }
  if (typeof a === 'object' && typeof b === 'object') return canonical(a) === canonical(b);
  return a === b;
}

/** Whether a Source cell gets the "differs" outline; a source that omitted the field has nothing to disagree with. */
export function sourceDiffers(sourceValue: unknown, current: unknown): boolean {
  if (sourceValue === undefined || sourceValue === null) return false;
  return !valuesEqual(sourceValue, current);
}

function proposedDefault(request: ProposalRequest, key: string): unknown {
  return request.requestedSchema.properties[key]?.default ?? null;
}

export function defaultIncluded(request: ProposalRequest, key: string): boolean {
  const field = request.fields[key];
  if (field?.include !== undefined) return field.include;
  return !valuesEqual(proposedDefault(request, key), field?.current);
}

/** Without this lock the reviewer could submit a record missing a required value it does not already have. */
export function requiredLocked(request: ProposalRequest, key: string): boolean {
  return (request.requestedSchema.required ?? []).includes(key) && isEmptyValue(request.fields[key]?.current);
}

function copy(v: unknown): unknown {
  // Row values must not alias the request's defaults or a source cell, or an edit would leak into them.
  return Array.isArray(v) ? [...(v as unknown[])] : v;
}

export function initialRows(request: ProposalRequest): GridRow[] {
  return Object.entries(request.requestedSchema.properties).map(([key, p]) => {
    const locked = requiredLocked(request, key);
    return {
      key,
      title: p.title ?? key,
      proposed: copy(proposedDefault(request, key)),
      included: locked || defaultIncluded(request, key),
      locked,
    };
  });
}

export function includedCount(rows: readonly GridRow[]): { included: number; total: number } {
  return { included: rows.filter((r) => r.included).length, total: rows.length };
}

export function acceptAll(rows: readonly GridRow[]): GridRow[] {
  return rows.map((r) => ({ ...r, included: true }));
}

export function rejectAll(rows: readonly GridRow[]): GridRow[] {
  return rows.map((r) => ({ ...r, included: r.locked }));
}

/** Resets values only: which rows are included is a separate decision the reviewer keeps. */
export function restoreProposed(rows: readonly GridRow[], request: ProposalRequest): GridRow[] {
  return rows.map((r) => ({ ...r, proposed: copy(proposedDefault(request, r.key)) }));
}

/** Double-click on a Source cell: take that value, and mean it. */
export function useSource(row: GridRow, value: unknown): GridRow {
  return { ...row, proposed: copy(value), included: true };
}

/**
 * Double-click on the Current cell: "no change" for this field. The UI offers it only when
 * Current has a value, which also means the row is never locked then; the lock still wins.
 */
export function restoreCurrent(row: GridRow, current: unknown): GridRow {
  return { ...row, proposed: copy(current ?? null), included: row.locked };
}

export function submission(rows: readonly GridRow[]): { included: string[]; values: Record<string, unknown> } {
  const chosen = rows.filter((r) => r.included);
  return {
    included: chosen.map((r) => r.key),
    values: Object.fromEntries(chosen.map((r) => [r.key, copy(r.proposed)])),
  };
}

/**
 * Back to what the reviewer last submitted (a decision the hub refused as invalid, reopened later): their values and
 * their choice of rows, over the defaults. Locked rows stay included whatever the attempt said.
 */
export function resumeRows(rows: readonly GridRow[], attempt: { values?: Record<string, unknown>; included?: readonly string[] }): GridRow[] {
  return rows.map((r) => ({
    ...r,
    proposed: attempt.values && Object.hasOwn(attempt.values, r.key) ? copy(attempt.values[r.key]) : r.proposed,
    included: r.locked || (attempt.included ? attempt.included.includes(r.key) : r.included),
  }));
}
