/** Lower-cased word tokens of a message: what the extension's history indexes so search never scans the table. */
export function searchWords(text: string): string[] {
  const words = text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, 200);
}
