/**
 * Characters that change how text reads, or hide text, without showing themselves: bidirectional overrides and
 * isolates (an agent can make "txt.exe" read as "exe.txt"), zero-width and other invisible format characters, tag
 * characters (invisible copies of ASCII, used to smuggle instructions), fillers and stray variation selectors, and
 * control characters. A reviewer must see exactly what an agent wrote, so the review replaces each one with a visible
 * token such as `⟨U+202E⟩` instead of letting the browser apply it. Pure: the extension renders the parts.
 */

interface HiddenRange {
  from: number;
  to: number;
  /** One name for the range, or one per code point in order. */
  names: string | readonly string[];
}

// Names for what an agent is most likely to use to mislead; a category for the rest (the code point says exactly which).
const HIDDEN_RANGES: readonly HiddenRange[] = [
  // Tab, line feed and carriage return are layout the reviewer sees; every other C0/C1 control is invisible.
  { from: 0x00, to: 0x08, names: 'control character' },
  { from: 0x0b, to: 0x0c, names: 'control character' },
  { from: 0x0e, to: 0x1f, names: 'control character' },
  { from: 0x7f, to: 0x9f, names: 'control character' },
  { from: 0xad, to: 0xad, names: 'SOFT HYPHEN' },
  { from: 0x34f, to: 0x34f, names: 'invisible format character' },
  { from: 0x61c, to: 0x61c, names: 'ARABIC LETTER MARK' },
  { from: 0x115f, to: 0x1160, names: 'invisible filler' },
  { from: 0x17b4, to: 0x17b5, names: 'invisible format character' },
  { from: 0x180b, to: 0x180f, names: 'invisible format character' },
  {
    from: 0x200b, to: 0x200f,
    names: ['ZERO WIDTH SPACE', 'ZERO WIDTH NON-JOINER', 'ZERO WIDTH JOINER', 'LEFT-TO-RIGHT MARK', 'RIGHT-TO-LEFT MARK'],
  },
  {
    from: 0x202a, to: 0x202e,
    names: ['LEFT-TO-RIGHT EMBEDDING', 'RIGHT-TO-LEFT EMBEDDING', 'POP DIRECTIONAL FORMATTING', 'LEFT-TO-RIGHT OVERRIDE', 'RIGHT-TO-LEFT OVERRIDE'],
  },
  { from: 0x2060, to: 0x2060, names: 'WORD JOINER' },
  { from: 0x2061, to: 0x2065, names: 'invisible format character' },
  { from: 0x2066, to: 0x2069, names: ['LEFT-TO-RIGHT ISOLATE', 'RIGHT-TO-LEFT ISOLATE', 'FIRST STRONG ISOLATE', 'POP DIRECTIONAL ISOLATE'] },
  { from: 0x206a, to: 0x206f, names: 'invisible format character' },
  { from: 0x3164, to: 0x3164, names: 'invisible filler' },
  // VS15 and VS16 (text or emoji presentation) are left alone right after the character they modify; see below.
  { from: 0xfe00, to: 0xfe0f, names: 'VARIATION SELECTOR' },
  { from: 0xfeff, to: 0xfeff, names: 'ZERO WIDTH NO-BREAK SPACE' },
  { from: 0xffa0, to: 0xffa0, names: 'invisible filler' },
  { from: 0xfff9, to: 0xfffb, names: 'invisible format character' },
  { from: 0x1bca0, to: 0x1bca3, names: 'invisible format character' },
  { from: 0x1d173, to: 0x1d17a, names: 'invisible format character' },
  { from: 0xe0000, to: 0xe007f, names: 'TAG' },
  { from: 0xe0100, to: 0xe01ef, names: 'VARIATION SELECTOR' },
];

/** Emoji and text presentation selectors: legitimate once, right after a visible character. */
const PRESENTATION_SELECTORS = new Set([0xfe0e, 0xfe0f]);

const hex = (cp: number) => cp.toString(16).toUpperCase().padStart(4, '0');

/** A quick test over the whole string, so ordinary text is never walked code point by code point. */
const MAYBE_HIDDEN = new RegExp(`[${HIDDEN_RANGES.map((r) => `\\u{${hex(r.from)}}-\\u{${hex(r.to)}}`).join('')}]`, 'u');

export interface HiddenCharacter {
  codePoint: number;
  /** `U+202E` */
  code: string;
  /** What the review shows in its place: `⟨U+202E⟩`. */
  token: string;
  /** `RIGHT-TO-LEFT OVERRIDE`: the Unicode name, or what kind of character it is. */
  name: string;
}

/** Visible text as it is, and each hidden character as its own part. */
export type VisiblePart = string | HiddenCharacter;

function rangeName(range: HiddenRange, cp: number): string {
  if (typeof range.names !== 'string') return range.names[cp - range.from] ?? 'invisible format character';
  if (range.names === 'VARIATION SELECTOR') return `VARIATION SELECTOR-${cp >= 0xe0100 ? cp - 0xe0100 + 17 : cp - 0xfe00 + 1}`;
  // A tag character mirrors an ASCII character; naming it shows what was smuggled.
  if (range.names === 'TAG' && cp >= 0xe0020 && cp <= 0xe007e) return `TAG ${JSON.stringify(String.fromCharCode(cp - 0xe0000))}`;
  if (range.names === 'TAG') return cp === 0xe0001 ? 'LANGUAGE TAG' : cp === 0xe007f ? 'CANCEL TAG' : 'unassigned tag character';
  return range.names;
}

function hiddenRange(cp: number): HiddenRange | undefined {
  return HIDDEN_RANGES.find((r) => cp >= r.from && cp <= r.to);
}

function describe(cp: number, range: HiddenRange): HiddenCharacter {
  const code = `U+${hex(cp)}`;
  return { codePoint: cp, code, token: `⟨${code}⟩`, name: rangeName(range, cp) };
}

/** The text split into visible runs and hidden characters, in order; ordinary text comes back as one part. */
export function visibleParts(text: string): VisiblePart[] {
  if (!MAYBE_HIDDEN.test(text)) return text === '' ? [] : [text];
  const parts: VisiblePart[] = [];
  let run = '';
  // Whether the previous code point was shown as itself: only then may a presentation selector modify it.
  let afterVisible = false;
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    const range = hiddenRange(cp);
    if (!range || (PRESENTATION_SELECTORS.has(cp) && afterVisible)) {
      run += char;
      afterVisible = !PRESENTATION_SELECTORS.has(cp);
      continue;
    }
    if (run) parts.push(run);
    run = '';
    parts.push(describe(cp, range));
    afterVisible = false;
  }
  if (run) parts.push(run);
  return parts;
}

export function hasHiddenCharacters(text: string): boolean {
  return visibleParts(text).some((p) => typeof p !== 'string');
}

/** The text with every hidden character replaced by its token: for attributes, options and notifications. */
export function revealHidden(text: string): string {
  return visibleParts(text).map((p) => (typeof p === 'string' ? p : p.token)).join('');
}

/** Each distinct hidden character in the text, in order of first appearance (for a warning next to an input). */
export function hiddenCharacters(text: string): HiddenCharacter[] {
  const seen = new Map<number, HiddenCharacter>();
  for (const part of visibleParts(text)) if (typeof part !== 'string' && !seen.has(part.codePoint)) seen.set(part.codePoint, part);
  return [...seen.values()];
}
