import { describe, expect, it } from 'vitest';
import { hasHiddenCharacters, hiddenCharacters, revealHidden, visibleParts } from '../../kit/core/visible-text.js';

const cp = (n: number) => String.fromCodePoint(n);

describe('each hidden character becomes a visible token with its name', () => {
  const table: [number, string][] = [
    // Bidirectional controls.
    [0x202a, 'LEFT-TO-RIGHT EMBEDDING'],
    [0x202b, 'RIGHT-TO-LEFT EMBEDDING'],
    [0x202c, 'POP DIRECTIONAL FORMATTING'],
    [0x202d, 'LEFT-TO-RIGHT OVERRIDE'],
    [0x202e, 'RIGHT-TO-LEFT OVERRIDE'],
    [0x2066, 'LEFT-TO-RIGHT ISOLATE'],
    [0x2067, 'RIGHT-TO-LEFT ISOLATE'],
    [0x2068, 'FIRST STRONG ISOLATE'],
    [0x2069, 'POP DIRECTIONAL ISOLATE'],
    [0x200e, 'LEFT-TO-RIGHT MARK'],
    [0x200f, 'RIGHT-TO-LEFT MARK'],
    [0x061c, 'ARABIC LETTER MARK'],
    // Zero-width and invisible.
    [0x200b, 'ZERO WIDTH SPACE'],
    [0x200c, 'ZERO WIDTH NON-JOINER'],
    [0x200d, 'ZERO WIDTH JOINER'],
    [0x2060, 'WORD JOINER'],
    [0xfeff, 'ZERO WIDTH NO-BREAK SPACE'],
    [0x00ad, 'SOFT HYPHEN'],
    [0x2061, 'invisible format character'],
    [0x2062, 'invisible format character'],
    [0x2063, 'invisible format character'],
    [0x2064, 'invisible format character'],
    [0x206a, 'invisible format character'],
    [0x206f, 'invisible format character'],
    [0x034f, 'invisible format character'],
    [0x180e, 'invisible format character'],
    [0x115f, 'invisible filler'],
    [0x3164, 'invisible filler'],
    [0xffa0, 'invisible filler'],
    [0x17b4, 'invisible format character'],
    [0xfff9, 'invisible format character'],
    [0x1d173, 'invisible format character'],
    [0x1bca0, 'invisible format character'],
    [0x2065, 'invisible format character'],
    [0x180b, 'invisible format character'],
    // Tags: invisible copies of ASCII, named after what they mirror.
    [0xe0001, 'LANGUAGE TAG'],
    [0xe0041, 'TAG "A"'],
    [0xe0069, 'TAG "i"'],
    [0xe007f, 'CANCEL TAG'],
    // Variation selectors other than a presentation selector after a visible character.
    [0xfe00, 'VARIATION SELECTOR-1'],
    [0xe0100, 'VARIATION SELECTOR-17'],
    [0xe01ef, 'VARIATION SELECTOR-256'],
    // Controls other than tab, line feed and carriage return.
    [0x0000, 'control character'],
    [0x0008, 'control character'],
    [0x001b, 'control character'],
    [0x007f, 'control character'],
    [0x0085, 'control character'],
  ];

  const rows = table.map(([code, name]) => [code.toString(16).toUpperCase().padStart(4, '0'), code, name] as const);
  it.each(rows)('U+%s', (hex, code, name) => {
    const parts = visibleParts(`a${cp(code)}b`);
    expect(parts).toEqual(['a', { codePoint: code, code: `U+${hex}`, token: `⟨U+${hex}⟩`, name }, 'b']);
    expect(revealHidden(`a${cp(code)}b`)).toBe(`a⟨U+${hex}⟩b`);
    expect(hasHiddenCharacters(cp(code))).toBe(true);
  });
});

describe('ordinary text is left exactly as it is', () => {
  const table: [string, string][] = [
    ['empty', ''],
    ['ASCII', 'Deploy 2.1 to production'],
    ['tab, newline, carriage return', 'a\tb\nc\r\nd'],
    ['Hebrew and Arabic (their direction is the script\'s own, not an override)', 'שלום مرحبا'],
    ['CJK and accents', '東京 café naïve'],
    ['an emoji with its presentation selector', '❤️ ☺︎'],
    ['astral characters', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀'],
    ['no-break and other visible spaces', 'a\u00a0b\u2009c\u3000d'],
    ['a lone surrogate (shown by the browser as a replacement character)', 'x\ud800y'],
  ];
  it.each(table)('%s', (_what, text) => {
    expect(revealHidden(text)).toBe(text);
    expect(hasHiddenCharacters(text)).toBe(false);
    expect(visibleParts(text)).toEqual(text === '' ? [] : [text]);
  });
});

describe('what a reviewer sees', () => {
  it('a right-to-left override that disguises a file name', () => {
    // Shown with the override applied, this reads "invoice_exe.pdf".
    expect(revealHidden('invoice_\u202efdp.exe')).toBe('invoice_⟨U+202E⟩fdp.exe');
  });

  it('an instruction smuggled in tag characters is spelled out, one token per character', () => {
    const smuggled = [...'ok'].map((c) => cp(0xe0000 + c.charCodeAt(0))).join('');
    const parts = visibleParts(`Approve${smuggled}`);
    expect(parts.map((p) => (typeof p === 'string' ? p : `${p.token} ${p.name}`))).toEqual(['Approve', '⟨U+E006F⟩ TAG "o"', '⟨U+E006B⟩ TAG "k"']);
  });

  it('runs of visible text stay whole between hidden characters', () => {
    expect(visibleParts('\u200bab\u200b\u200bcd')).toEqual([
      expect.objectContaining({ token: '⟨U+200B⟩' }), 'ab', expect.objectContaining({ token: '⟨U+200B⟩' }), expect.objectContaining({ token: '⟨U+200B⟩' }), 'cd',
    ]);
  });

  it('a presentation selector is shown as itself only right after a visible character', () => {
    // Alone, at the start, or repeated, it modifies nothing a person can see: it can only carry hidden data.
    expect(revealHidden('\ufe0f')).toBe('⟨U+FE0F⟩');
    expect(revealHidden('❤\ufe0f\ufe0f')).toBe('❤\ufe0f⟨U+FE0F⟩');
    expect(revealHidden('\u200b\ufe0e')).toBe('⟨U+200B⟩⟨U+FE0E⟩');
  });

  it('a zero width joiner is shown even inside an emoji sequence: the reviewer sees every character', () => {
    expect(revealHidden('👩\u200d💻')).toBe('👩⟨U+200D⟩💻');
  });

  it('lists each distinct hidden character once, in order', () => {
    expect(hiddenCharacters('a\u202eb\u200bc\u202e').map((h) => `${h.code} ${h.name}`)).toEqual(['U+202E RIGHT-TO-LEFT OVERRIDE', 'U+200B ZERO WIDTH SPACE']);
    expect(hiddenCharacters('plain')).toEqual([]);
  });
});
