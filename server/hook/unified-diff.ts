// A unified diff of two texts, so a person reviews an agent's edit the way they read one in git: what goes, what comes,
// a few lines around it. Pure; Myers' O((N+M)·D) line diff after trimming the common head and tail, which keeps a small
// edit in a large file cheap.

type Op = { kind: ' ' | '-' | '+'; line: string };

const CONTEXT = 3;

/** Lines without their terminators; a final newline ends the last line instead of starting an empty one. */
function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

/** Past this many differing lines a middle is shown as removed then added: the search's memory grows with its square. */
const MAX_EDIT_DISTANCE = 1000;

/** The shortest edit script from `a` to `b` (Myers 1986), as kept, removed and added lines in order. */
function myers(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  // v[k] is the furthest x on diagonal k; each round's frontier is kept (only its 2d+1 live diagonals) to walk back.
  let v = new Map<number, number>([[1, 0]]);
  const trace: Map<number, number>[] = [];
  let done = false;
  for (let d = 0; d <= max && !done; d++) {
    trace.push(v);
    const next = new Map<number, number>();
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1));
      let x = down ? (v.get(k + 1) ?? 0) : (v.get(k - 1) ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next.set(k, x);
      if (x >= n && y >= m) done = true;
    }
    v = next;
  }
  if (!done) return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const frontier = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && (frontier.get(k - 1) ?? -1) < (frontier.get(k + 1) ?? -1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : (frontier.get(prevK) ?? 0);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: ' ', line: a[x]! });
    }
    if (d === 0) break;
    if (down) ops.push({ kind: '+', line: b[--y]! });
    else ops.push({ kind: '-', line: a[--x]! });
  }
  return ops.reverse();
}

function lineDiff(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const middle = myers(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  return [...a.slice(0, head).map((line): Op => ({ kind: ' ', line })), ...middle, ...a.slice(a.length - tail).map((line): Op => ({ kind: ' ', line }))];
}

const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);

/**
 * The unified diff (`---`/`+++` headers, `@@` hunks with three lines of context) turning `before` into `after`; `''`
 * when they are equal. `before: null` is a new file (`--- /dev/null`).
 */
export function unifiedDiff(path: string, before: string | null, after: string): string {
  const ops = lineDiff(lines(before ?? ''), lines(after));
  if (!ops.some((op) => op.kind !== ' ')) return '';
  const out = [`--- ${before === null ? '/dev/null' : path}`, `+++ ${path}`];
  let i = 0;
  // Line numbers (1-based) in the old and new text at ops[i].
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let nw = 1;
  for (const op of ops) {
    oldAt.push(o);
    newAt.push(nw);
    if (op.kind !== '+') o++;
    if (op.kind !== '-') nw++;
  }
  while (i < ops.length) {
    while (i < ops.length && ops[i]!.kind === ' ') i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - CONTEXT);
    let end = i;
    // Extend over changes closer than two contexts apart: they share one hunk.
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let next = end;
      while (next < ops.length && ops[next]!.kind === ' ') next++;
      if (next < ops.length && next - end <= 2 * CONTEXT) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + CONTEXT);
    const hunk = ops.slice(start, stop);
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${range(oldAt[start]!, oldCount)} +${range(newAt[start]!, newCount)} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    i = stop;
  }
  return `${out.join('\n')}\n`;
}
