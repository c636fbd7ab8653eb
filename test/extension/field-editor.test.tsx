import { fireEvent, render, screen } from '@testing-library/preact';
import { useState } from 'preact/hooks';
import { describe, expect, it, vi } from 'vitest';
import type { PropertySchema } from '../../shared/requested-schema.js';
import { FieldEditor } from '../../extension/ui/review/field-editor.js';

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

  it('keeps a short string with a small maxLength in an input, with the limit', () => {
    const { el } = editor({ type: 'string', maxLength: 20 }, 'x'.repeat(80));
    expect(el.tagName).toBe('INPUT');
    expect((el as HTMLInputElement).maxLength).toBe(20);
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
