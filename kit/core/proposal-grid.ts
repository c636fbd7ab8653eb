// What the elicit_proposal review grid derives rather than receives (seed 004 "Derived behavior"):
// highlights, default inclusion, the required lock, and the header/double-click actions.
// Pure and immutable so the extension's UI state is a fold over these functions and easy to test.
import type { ProposalRequest } from '../../shared/approval-input.js';
import { ownEntry } from './own-entry.js';
import { propertyKind } from '../../shared/requested-schema.js';

export interface GridRow {
  key: string;
  title: string;
  proposed: unknown;
  included: boolean;
  locked: boolean;
  /**
   * Whether Proposed holds a value someone chose — the agent's default, a copied cell, the person's edit — rather than
   * the blank a property without a default starts with. Accept All includes only these: including a blank would clear
   * the record's value although nobody proposed that.
   */
  chosen: boolean;
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

function hasDefault(request: ProposalRequest, key: string): boolean {
  return ownEntry(request.requestedSchema.properties, key)?.default !== undefined;
}

/**
 * The initial Proposed value: the default; without one, nothing (null) — except a boolean, whose checkbox cannot show
 * "nothing": it starts unticked, which is false, so false is what it holds and what it sends.
 */
function proposedDefault(request: ProposalRequest, key: string): unknown {
  const p = ownEntry(request.requestedSchema.properties, key);
  if (p?.default !== undefined) return p.default;
  return p !== undefined && propertyKind(p) === 'boolean' ? false : null;
}

/**
 * Seed 004: included when the default differs from Current, unless fields[k].include says otherwise. A property without
 * a default proposes nothing, so it is not included by default (the required lock below may still include it):
 * comparing its blank with Current would include it whenever the record has a value, and submit null, clearing it.
 */
export function defaultIncluded(request: ProposalRequest, key: string): boolean {
  const field = ownEntry(request.fields, key);
  if (field?.include !== undefined) return field.include;
  if (!hasDefault(request, key)) return false;
  return !valuesEqual(proposedDefault(request, key), field?.current);
}

/** Without this lock the reviewer could submit a record missing a required value it does not already have. */
export function requiredLocked(request: ProposalRequest, key: string): boolean {
  return (request.requestedSchema.required ?? []).includes(key) && isEmptyValue(ownEntry(request.fields, key)?.current);
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
      chosen: hasDefault(request, key),
    };
  });
}

export function includedCount(rows: readonly GridRow[]): { included: number; total: number } {
  return { included: rows.filter((r) => r.included).length, total: rows.length };
}

/** Includes every row that proposes something; a row left blank stays as it is, so Accept All never clears a value. */
export function acceptAll(rows: readonly GridRow[]): GridRow[] {
  return rows.map((r) => ({ ...r, included: r.included || r.chosen }));
}

export function rejectAll(rows: readonly GridRow[]): GridRow[] {
  return rows.map((r) => ({ ...r, included: r.locked }));
}

/**
 * Resets values: which rows are included is a separate decision the reviewer keeps — except a row without a default,
 * which goes back to proposing nothing and so to its initial inclusion: kept included, its blank would clear the record.
 */
export function restoreProposed(rows: readonly GridRow[], request: ProposalRequest): GridRow[] {
  return rows.map((r) => {
    const chosen = hasDefault(request, r.key);
    const included = chosen ? r.included : r.locked || defaultIncluded(request, r.key);
    return { ...r, proposed: copy(proposedDefault(request, r.key)), included, chosen };
  });
}

/** The person typed or picked a value: an edit the submit would drop is never what they meant, so the row is included. */
export function editProposed(row: GridRow, value: unknown): GridRow {
  return { ...row, proposed: copy(value), included: true, chosen: true };
}

/**
 * Double-click on a Source cell: take that value, and mean it. The value is already converted to the field's type
 * (convert-value.ts); a cell that cannot be converted never gets here.
 */
export function useSource(row: GridRow, value: unknown): GridRow {
  return { ...row, proposed: copy(value), included: true, chosen: true };
}

/**
 * Double-click on the Current cell: "no change" for this field (converted like a Source cell). The UI offers it only when
 * Current has a value, which also means the row is never locked then; the lock still wins.
 */
export function restoreCurrent(row: GridRow, current: unknown): GridRow {
  return { ...row, proposed: copy(current ?? null), included: row.locked, chosen: true };
}

export function submission(rows: readonly GridRow[]): { included: string[]; values: Record<string, unknown> } {
  const sent = rows.filter((r) => r.included);
  return {
    included: sent.map((r) => r.key),
    // fromEntries defines own keys, so a property named "__proto__" stays a value instead of becoming a prototype.
    values: Object.fromEntries(sent.map((r) => [r.key, copy(r.proposed)])),
  };
}

/**
 * Back to what the reviewer last submitted (a decision the hub refused as invalid, reopened later): their values and
 * their choice of rows, over the defaults. Locked rows stay included whatever the attempt said.
 */
export function resumeRows(rows: readonly GridRow[], attempt: { values?: Record<string, unknown>; included?: readonly string[] }): GridRow[] {
  return rows.map((r) => {
    const resumed = attempt.values !== undefined && Object.hasOwn(attempt.values, r.key);
    return {
      ...r,
      proposed: resumed ? copy(attempt.values?.[r.key]) : r.proposed,
      included: r.locked || (attempt.included ? attempt.included.includes(r.key) : r.included),
      chosen: r.chosen || resumed,
    };
  });
}
