/**
 * A record's own entry, or undefined. Agents choose the keys of properties, fields and sources: a plain lookup of a
 * key such as "constructor" or "toString" that the record lacks would read Object.prototype instead.
 */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
