import { cleanup, fireEvent, render, screen } from '@testing-library/preact';
import { useState } from 'preact/hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PropertySchema } from '../../shared/requested-schema.js';
import { FieldEditor } from '../../kit/ui/review/field-editor.js';
import { descriptions } from './review-helpers.js';

function editor(schema: PropertySchema, value: unknown, extra: { invalid?: boolean; describedBy?: string; disabled?: boolean } = {}) {
  const onChange = vi.fn();
  render(<FieldEditor schema={schema} value={value} label="Field" onChange={onChange} {...extra} />);
  return { el: screen.getByLabelText('Field'), onChange };
}

describe('FieldEditor', () => {
  it('edits a string in a text input; empty becomes null', () => {
    const { el, onChange } = editor({ type: 'string', title: 'Name' }, 'Acme');
    expect((el as HTMLInputElement).type).toBe('text');
    expect((el as HTMLInputElement).value).toBe('Acme');
    fireEvent.input(el, { target: { value: 'Acme Inc' } });
    fireEvent.input(el, { target: { value: '' } });
    expect(onChange.mock.calls).toEqual([['Acme Inc'], [null]]);
  });

  it('uses a textarea for long text: maxLength over 200, a long value, or a newline', () => {
    editor({ type: 'string', maxLength: 500 }, '');
    expect(screen.getByLabelText('Field').tagName).toBe('TEXTAREA');
  });

  it.each([['x'.repeat(81)], ['two\nlines']])('uses a textarea for the value %j', (value) => {
    const { el, onChange } = editor({ type: 'string' }, value);
    expect(el.tagName).toBe('TEXTAREA');
    fireEvent.input(el, { target: { value: 'short' } });
    expect(onChange).toHaveBeenCalledWith('short');
  });

  it('keeps a short string with a small maxLength in an input; the limit is a hint, not a browser cut-off', () => {
    const { el } = editor({ type: 'string', maxLength: 20 }, 'x'.repeat(80));
    expect(el.tagName).toBe('INPUT');
    // The browser would count UTF-16 units where the validator counts characters: one rule, the validator's.
    expect(el.hasAttribute('maxlength')).toBe(false);
    expect(descriptions(el)).toEqual(['At most 20 characters']);
  });

  it('edits an integer with min, max and step 1; empty becomes null', () => {
    const { el, onChange } = editor({ type: 'integer', minimum: 1, maximum: 10 }, 3);
    const input = el as HTMLInputElement;
    expect(input.type).toBe('number');
    expect(input.min).toBe('1');
    expect(input.max).toBe('10');
    expect(input.step).toBe('1');
    expect(input.value).toBe('3');
    fireEvent.input(input, { target: { value: '7' } });
    fireEvent.input(input, { target: { value: '' } });
    expect(onChange.mock.calls).toEqual([[7], [null]]);
  });

  it('edits a number with any step', () => {
    const { el, onChange } = editor({ type: 'number' }, null);
    expect((el as HTMLInputElement).step).toBe('any');
    expect((el as HTMLInputElement).value).toBe('');
    fireEvent.input(el, { target: { value: '2.5' } });
    expect(onChange).toHaveBeenCalledWith(2.5);
  });

  it('edits a boolean with a checkbox', () => {
    const { el, onChange } = editor({ type: 'boolean' }, false);
    expect((el as HTMLInputElement).type).toBe('checkbox');
    expect((el as HTMLInputElement).checked).toBe(false);
    fireEvent.click(el);
    expect(onChange).toHaveBeenCalledWith(true);
  });

  it('chooses one option by title from a select with an empty choice', () => {
    const { el, onChange } = editor({ type: 'string', oneOf: [{ const: 'g', title: 'Gold' }, { const: 's', title: 'Silver' }] }, 'g');
    const select = el as HTMLSelectElement;
    expect(select.multiple).toBe(false);
    expect(Array.from(select.options).map((o) => [o.value, o.textContent])).toEqual([['', '—'], ['g', 'Gold'], ['s', 'Silver']]);
    expect(select.value).toBe('g');
    fireEvent.change(select, { target: { value: 's' } });
    fireEvent.change(select, { target: { value: '' } });
    expect(onChange.mock.calls).toEqual([['s'], [null]]);
  });

  it('titles plain enum options with enumNames', () => {
    const { el } = editor({ type: 'string', enum: ['a', 'b'], enumNames: ['Alpha', 'Beta'] }, null);
    expect(Array.from((el as HTMLSelectElement).options).map((o) => o.textContent)).toEqual(['—', 'Alpha', 'Beta']);
    expect((el as HTMLSelectElement).value).toBe('');
  });

  it('chooses several options, reported in option order', () => {
    const schema: PropertySchema = { type: 'array', items: { anyOf: [{ const: 'a', title: 'Alpha' }, { const: 'b', title: 'Beta' }, { const: 'c', title: 'Gamma' }] } };
    const { el, onChange } = editor(schema, ['c']);
    const select = el as HTMLSelectElement;
    expect(select.multiple).toBe(true);
    expect(Array.from(select.options).map((o) => [o.textContent, o.selected])).toEqual([['Alpha', false], ['Beta', false], ['Gamma', true]]);
    const [alpha] = Array.from(select.options);
    if (alpha) alpha.selected = true;
    fireEvent.change(select);
    expect(onChange).toHaveBeenCalledWith(['a', 'c']);
  });

  it('marks an invalid field and links its description', () => {
    const { el } = editor({ type: 'string' }, 'x', { invalid: true, describedBy: 'err-1' });
    expect(el.getAttribute('aria-invalid')).toBe('true');
    expect(el.getAttribute('aria-describedby')).toBe('err-1');
  });

  it('is not marked invalid by default, and can be disabled', () => {
    const { el } = editor({ type: 'string' }, 'x', { disabled: true });
    expect(el.getAttribute('aria-invalid')).toBeNull();
    expect((el as HTMLInputElement).disabled).toBe(true);
  });

  it('switches to a textarea while typing past the threshold, keeps focus, and stays one', () => {
    function Host() {
      const [v, setV] = useState<unknown>('short');
      return <FieldEditor schema={{ type: 'string' }} value={v} label="Field" onChange={setV} />;
    }
    render(<Host />);
    const input = screen.getByLabelText('Field');
    input.focus();
    fireEvent.input(input, { target: { value: 'y'.repeat(81) } });
    const area = screen.getByLabelText('Field');
    expect(area.tagName).toBe('TEXTAREA');
    expect(document.activeElement).toBe(area);
    fireEvent.input(area, { target: { value: 'y' } });
    expect(screen.getByLabelText('Field').tagName).toBe('TEXTAREA');
  });
});

// The date-time editor shows local time: pin the zone (Node re-reads TZ when it is assigned).
const originalZone = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Paris';
});
afterAll(() => {
  process.env.TZ = originalZone;
});

/** A host that holds the value, as the reviews do, so the editor shows what it reported. */
function hosted(schema: PropertySchema, initial: unknown) {
  const seen: unknown[] = [];
  function Host() {
    const [v, setV] = useState<unknown>(initial);
    return <FieldEditor schema={schema} value={v} label="Field" onChange={(next) => { seen.push(next); setV(next); }} />;
  }
  render(<Host />);
  return { el: () => screen.getByLabelText('Field') as HTMLInputElement, seen };
}

/** What the browser does for a half-typed number or date: the value reads empty, and validity says why. */
function typeUnreadable(el: HTMLInputElement) {
  Object.defineProperty(el, 'validity', { configurable: true, value: { badInput: true } });
  fireEvent.input(el, { target: { value: '' } });
}

describe('FieldEditor: an input that matches the format', () => {
  it.each<[string, PropertySchema, unknown, string, string]>([
    ['email', { type: 'string', format: 'email' }, 'ops@example.com', 'email', 'ops@example.com'],
    ['uri', { type: 'string', format: 'uri' }, 'https://example.com/', 'url', 'https://example.com/'],
    ['date', { type: 'string', format: 'date' }, '2024-02-29', 'date', '2024-02-29'],
    ['date-time, shown in local time', { type: 'string', format: 'date-time' }, '2026-11-30T16:05:00Z', 'datetime-local', '2026-11-30T17:05'],
    ['date-time given in another offset', { type: 'string', format: 'date-time' }, '2026-11-30T08:05:00-08:00', 'datetime-local', '2026-11-30T17:05'],
    ['empty date-time', { type: 'string', format: 'date-time' }, null, 'datetime-local', ''],
    ['plain text', { type: 'string' }, 'Acme', 'text', 'Acme'],
  ])('%s', (_name, schema, value, type, shown) => {
    const { el } = editor(schema, value);
    expect((el as HTMLInputElement).type).toBe(type);
    expect((el as HTMLInputElement).value).toBe(shown);
  });

  it.each<[string, PropertySchema, string, unknown]>([
    ['an email as typed', { type: 'string', format: 'email' }, 'x@y.test', 'x@y.test'],
    ['a date as picked', { type: 'string', format: 'date' }, '2026-12-01', '2026-12-01'],
    ['a local date-time as RFC 3339 with the person\'s offset', { type: 'string', format: 'date-time' }, '2026-12-01T09:30', '2026-12-01T09:30:00+01:00'],
    ['a summer date-time with the summer offset', { type: 'string', format: 'date-time' }, '2026-07-01T09:30', '2026-07-01T09:30:00+02:00'],
    ['a cleared date-time as null', { type: 'string', format: 'date-time' }, '', null],
  ])('reports %s', (_name, schema, typed, sent) => {
    const { el, onChange } = editor(schema, null);
    fireEvent.input(el, { target: { value: typed } });
    expect(onChange.mock.calls).toEqual([[sent]]);
  });

  it('shows the date-time it sends: the local time typed, and the zone in a hint', () => {
    const { el, seen } = hosted({ type: 'string', format: 'date-time' }, '2026-11-30T16:05:00Z');
    expect(descriptions(el())).toEqual(['Your local time (UTC+01:00)']);
    fireEvent.input(el(), { target: { value: '2026-12-01T09:30' } });
    expect(seen).toEqual(['2026-12-01T09:30:00+01:00']);
    expect(el().value).toBe('2026-12-01T09:30');
  });

  it('shows seconds (step 1) and milliseconds (step 0.001) when the value has them', () => {
    expect((editor({ type: 'string', format: 'date-time' }, '2026-11-30T16:05:30Z').el as HTMLInputElement).step).toBe('1');
    cleanup();
    const { el } = editor({ type: 'string', format: 'date-time' }, '2026-11-30T16:05:30.25Z');
    expect([(el as HTMLInputElement).step, (el as HTMLInputElement).value]).toEqual(['0.001', '2026-11-30T17:05:30.25']);
  });

  it.each<[string, PropertySchema, string]>([
    ['an email with surrounding spaces (the email input would strip them)', { type: 'string', format: 'email' }, ' ops@example.com'],
    ['a URL with a line break', { type: 'string', format: 'uri' }, 'https://example.com/\n'],
    ['a date that is not one (the date input would show nothing)', { type: 'string', format: 'date' }, '2026/12/01'],
    ['a date-time without offset', { type: 'string', format: 'date-time' }, '2026-11-30 16:05'],
    ['a date-time finer than milliseconds', { type: 'string', format: 'date-time' }, '2026-11-30T16:05:00.123456Z'],
  ])('shows %s as it is, in a text box', (_name, schema, value) => {
    const { el } = editor(schema, value);
    expect([el.tagName === 'TEXTAREA' ? 'textarea' : (el as HTMLInputElement).type, (el as HTMLInputElement).value]).toEqual([value.includes('\n') ? 'textarea' : 'text', value]);
  });

  it('keeps the text box once the value is fixed, so the element does not change under the person\'s typing', () => {
    const { el, seen } = hosted({ type: 'string', format: 'date' }, '2026/12/01');
    el().focus();
    fireEvent.input(el(), { target: { value: '2026-12-01' } });
    expect(seen).toEqual(['2026-12-01']);
    expect(el().type).toBe('text');
    expect(document.activeElement).toBe(el());
  });
});

describe('FieldEditor: what the browser cannot read is not sent as something else', () => {
  it.each<[string, PropertySchema, unknown]>([
    ['a half-typed number', { type: 'number' }, 3],
    ['a half-typed integer', { type: 'integer' }, 3],
    ['a half-typed date', { type: 'string', format: 'date' }, '2026-12-01'],
    ['a half-typed date-time', { type: 'string', format: 'date-time' }, '2026-11-30T16:05:00Z'],
  ])('%s is reported as unreadable (NaN), not as empty or the old value', (_name, schema, value) => {
    const { el, onChange } = editor(schema, value);
    typeUnreadable(el as HTMLInputElement);
    expect(onChange.mock.calls).toEqual([[Number.NaN]]);
  });

  it('an unreadable value leaves the box alone: the person is still typing, and "NaN" would wipe their text', () => {
    const { el, seen } = hosted({ type: 'number' }, 3);
    const writes: string[] = [];
    // The browser reads a half-typed number as '' and keeps the text on screen, unless the value is written.
    Object.defineProperty(el(), 'value', { configurable: true, get: () => '', set: (v: string) => writes.push(v) });
    typeUnreadable(el());
    expect(seen).toEqual([Number.NaN]);
    expect(writes).toEqual([]);
  });

  it('keeps a number as typed while it means the value held, so "2.50" is not rewritten to "2.5" under the caret', () => {
    const { el, seen } = hosted({ type: 'number' }, null);
    fireEvent.input(el(), { target: { value: '2.50' } });
    expect(seen).toEqual([2.5]);
    expect(el().value).toBe('2.50');
  });
});

describe('FieldEditor: limits shown as hints, described to screen readers', () => {
  it.each<[PropertySchema, string[]]>([
    [{ type: 'string', minLength: 3, maxLength: 40 }, ['3–40 characters']],
    [{ type: 'integer', minimum: 1, maximum: 10 }, ['A whole number from 1 to 10']],
    [{ type: 'number', minimum: 0 }, ['A number, at least 0']],
    [{ type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 2 }, ['Choose at most 2']],
    [{ type: 'string' }, []],
  ])('%j', (schema, hints) => {
    const { el } = editor(schema, null);
    expect(descriptions(el)).toEqual(hints);
  });

  it('puts the error first, then the hint', () => {
    const { el } = editor({ type: 'integer' }, 3.5, { invalid: true, describedBy: 'err-1' });
    expect(el.getAttribute('aria-describedby')?.split(' ')[0]).toBe('err-1');
    expect(descriptions(el).slice(1)).toEqual(['A whole number']);
  });
});

describe('FieldEditor: a control shows its real state', () => {
  it('a single choice holding a value that is not an option shows it, named as such', () => {
    const { el } = editor({ type: 'string', enum: ['a', 'b'] }, 'Bank');
    const select = el as HTMLSelectElement;
    expect(select.value).toBe('Bank');
    expect(select.selectedOptions[0]?.textContent).toBe('Bank (not an option)');
  });

  it('a multiple choice holding items that are not options shows them selected, named as such', () => {
    const { el } = editor({ type: 'array', items: { enum: ['a', 'b'] } }, ['a', 'Bank']);
    const chosen = Array.from((el as HTMLSelectElement).selectedOptions).map((o) => o.textContent);
    expect(chosen).toEqual(['a', 'Bank (not an option)']);
  });
});
