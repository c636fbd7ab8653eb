import { byteLength } from '../../shared/approval-input.js';
import type { FieldIssue } from '../../shared/field-issues.js';
import { MAX_FRAME_BYTES, type DecideParams } from '../../shared/wire-protocol.js';
import type { OutboxRow } from '../../kit/rows/rows.js';

/** An outbox row holds only the fields that were given, so it is the decide call's params minus its queueing time. */
export function decideParams(entry: OutboxRow): DecideParams {
  const { queuedAt: _at, ...decision } = entry;
  return decision;
}

/** The frame a decide call makes, as the hub measures it against its limit: the params inside `{ id, method, params }`. */
const FRAME_OVERHEAD = byteLength({ id: 'c0000000000', method: 'decide', params: {} });

/** The same path spelling as the shared validator's issues, so the review puts the message next to its field. */
function valuePath(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `values.${key}` : `values[${JSON.stringify(key)}]`;
}

/**
 * Why a decide frame cannot be sent, or null when it can. The hub closes a socket that sends a frame over its limit
 * (1009), and the outbox would send it again after every welcome: such a decision is refused here, naming its largest
 * part, which is what the person has to shorten.
 */
export function oversizedIssue(message: DecideParams): FieldIssue | null {
  const total = byteLength(message) + FRAME_OVERHEAD;
  if (total <= MAX_FRAME_BYTES) return null;
  const parts: [string, number][] = Object.entries(message.values ?? {}).map(([key, v]) => [valuePath(key), byteLength(v)]);
  if (message.included !== undefined) parts.push(['included', byteLength(message.included)]);
  if (message.comment !== undefined) parts.push(['comment', byteLength(message.comment)]);
  // The ids and the key are bounded by the wire schema, so some part is always the bulk of an oversized frame.
  const [path, size] = parts.length > 0 ? parts.reduce((a, b) => (b[1] > a[1] ? b : a)) : ['(decision)', total];
  return {
    path,
    rule: 'too_large',
    message: `${path}: is ${size} bytes as JSON; a decision must fit in ${MAX_FRAME_BYTES} bytes (the hub's message limit) and this one is ${total} bytes`,
  };
}
