// Newline-delimited JSON-RPC on stdio, split into lines: one splitter for the fast handshake (which must not load the
// SDK) and the transport that takes over from it.

/** Calls `onLine` with each complete, non-blank line of `buffer` (a trailing CR dropped) and returns what is left. */
export function takeLines(buffer: string, onLine: (line: string) => void): string {
  let rest = buffer;
  let newline = rest.indexOf('\n');
  while (newline !== -1) {
    const line = rest.slice(0, newline).replace(/\r$/, '');
    rest = rest.slice(newline + 1);
    if (line.trim() !== '') onLine(line);
    newline = rest.indexOf('\n');
  }
  return rest;
}
