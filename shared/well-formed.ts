// Text that is not Unicode: a lone UTF-16 surrogate ("\ud800" in JSON) is valid JSON but not valid I-JSON (RFC 7493),
// so it has no canonical form (RFC 8785) and no hash: the ledger, the shown hash and a passkey's challenge could not be
// made of it. Such a request, decision or rule is refused at the door, naming the field, instead of breaking later.
import { issue, isObject, type FieldIssue, type Segment } from './field-issues.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first string (or object key) in `value` holding a lone surrogate, as an issue at its path; null when none does. */
export function notUnicodeIssue(value: unknown, at: readonly Segment[] = []): FieldIssue | null {
  const stack: { value: unknown; at: readonly Segment[] }[] = [{ value, at }];
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next) break;
    const here = next.value;
    if (typeof here === 'string') {
      if (LONE_SURROGATE.test(here)) return issue(next.at, 'unicode', 'holds a lone UTF-16 surrogate (not Unicode text); send well-formed text');
    } else if (Array.isArray(here)) {
      here.forEach((item, i) => stack.push({ value: item, at: [...next.at, i] }));
    } else if (isObject(here)) {
      for (const [key, item] of Object.entries(here)) {
        if (LONE_SURROGATE.test(key)) return issue([...next.at, key], 'unicode', 'this key holds a lone UTF-16 surrogate (not Unicode text)');
        stack.push({ value: item, at: [...next.at, key] });
      }
    }
  }
  return null;
}
