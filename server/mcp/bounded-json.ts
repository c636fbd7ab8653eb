/**
 * A copy of a parsed JSON value with its depth and size bounded. What a host sends is kept (the tap) and echoed (the
 * doctor) verbatim, and both `structuredClone` and `JSON.stringify` recurse: a value nested 100,000 levels deep throws
 * RangeError out of either, which on the stdin handler ended the process. This walk recurses at most `maxDepth` levels,
 * so no input can exhaust the stack, and stops spending once `maxBytes` is used up.
 */

export interface JsonBounds {
  /** Arrays and objects deeper than this are replaced by a marker string. */
  maxDepth: number;
  /** The most UTF-8 bytes the copy takes, written with `indent`; Infinity bounds the depth only. */
  maxBytes: number;
  /** Spaces per level the copy will be written with (`JSON.stringify(v, null, indent)`): each line's indent is spent too. */
  indent?: number;
}

export interface BoundedJson {
  value: unknown;
  /** True when anything was left out: a level too deep, a string clipped, members dropped past the budget. */
  truncated: boolean;
}

export const CUT_MARKER = '…[cut]';

interface Budget {
  left: number;
  truncated: boolean;
}

const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text), 'utf8');

function copy(value: unknown, depth: number, bounds: JsonBounds, budget: Budget): unknown {
  if (budget.left <= 0) {
    budget.truncated = true;
    return CUT_MARKER;
  }
  if (value === null || typeof value === 'boolean' || typeof value === 'number') {
    budget.left -= String(value).length;
    return value;
  }
  if (typeof value === 'string') {
    if (budget.left === Number.POSITIVE_INFINITY) return value;
    // Clip by characters first so a multi-megabyte string is never escaped whole just to be measured.
    const clipped = value.length > budget.left ? value.slice(0, Math.max(0, budget.left)) : value;
    const cost = jsonBytes(clipped);
    if (clipped === value && cost <= budget.left) {
      budget.left -= cost;
      return value;
    }
    budget.truncated = true;
    // Escapes and multi-byte characters cost more than one byte each: the longest prefix that fits, by bisection.
    let low = 0;
    let high = clipped.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (jsonBytes(clipped.slice(0, mid)) <= budget.left) low = mid;
      else high = mid - 1;
    }
    budget.left = 0;
    return `${clipped.slice(0, low)}${CUT_MARKER}`;
  }
  // JSON.parse makes none of these; an absent member (undefined) must stay absent, not become null.
  if (typeof value !== 'object') return undefined;
  if (depth >= bounds.maxDepth) {
    budget.truncated = true;
    budget.left -= CUT_MARKER.length + 2;
    return CUT_MARKER;
  }
  // A member's separator, plus its own line when the copy is written indented (a deep value is mostly indentation).
  const memberCost = 1 + (bounds.indent ? 1 + bounds.indent * (depth + 1) : 0);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    budget.left -= 2 + memberCost;
    for (const item of value) {
      if (budget.left <= 0) {
        budget.truncated = true;
        out.push(CUT_MARKER);
        break;
      }
      budget.left -= memberCost;
      out.push(copy(item, depth + 1, bounds, budget));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  budget.left -= 2 + memberCost;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    // A key longer than what is left is not measured (it may be megabytes): it does not fit.
    const keyCost = key.length > budget.left ? Number.POSITIVE_INFINITY : jsonBytes(key) + 2 + memberCost;
    if (keyCost > budget.left) {
      budget.truncated = true;
      // A key no JSON object of a host's is likely to carry, so the marker cannot overwrite a real member.
      Object.defineProperty(out, CUT_MARKER, { value: 'members left out', enumerable: true, writable: true, configurable: true });
      break;
    }
    budget.left -= keyCost;
    const member = copy((value as Record<string, unknown>)[key], depth + 1, bounds, budget);
    // defineProperty: a member named "__proto__" (JSON.parse makes it an own property) must stay data, not a prototype.
    Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function boundedJson(value: unknown, bounds: JsonBounds): BoundedJson {
  if (bounds.maxBytes === Number.POSITIVE_INFINITY) {
    const budget: Budget = { left: bounds.maxBytes, truncated: false };
    return { value: copy(value, 0, bounds, budget), truncated: budget.truncated };
  }
  // The walk's count is close, not exact (the markers it adds, the lines that close containers): measure what it made,
  // which is safe to stringify now that its depth is bounded, and spend less by the overshoot until it fits.
  // The step at least doubles each time, so a few rounds always do.
  let spend = bounds.maxBytes;
  for (let round = 0; ; round++) {
    const budget: Budget = { left: spend, truncated: false };
    const result = copy(value, 0, bounds, budget);
    const bytes = result === undefined ? 0 : Buffer.byteLength(JSON.stringify(result, null, bounds.indent), 'utf8');
    if (bytes <= bounds.maxBytes || spend <= 0) return { value: result, truncated: budget.truncated };
    spend -= Math.max(bytes - bounds.maxBytes, 64 * 2 ** round);
  }
}
