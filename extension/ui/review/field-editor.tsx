import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { enumOptions, propertyKind, type PropertySchema } from '../../../shared/requested-schema.js';
import { hasHiddenCharacters, revealHidden } from '../../../shared/visible-text.js';
import { HiddenCharactersWarning } from '../visible-text.js';

interface FieldEditorProps {
  schema: PropertySchema;
  value: unknown;
  /** The accessible name (aria-label); a visible label, if any, is the caller's. */
  label: string;
  onChange(v: unknown): void;
  invalid?: boolean;
  describedBy?: string;
  disabled?: boolean;
  id?: string;
  required?: boolean;
}

const LONG_TEXT = 80;

function needsTextarea(schema: PropertySchema, value: unknown): boolean {
  if ('maxLength' in schema && schema.maxLength !== undefined && schema.maxLength > 200) return true;
  return typeof value === 'string' && (value.length > LONG_TEXT || value.includes('\n'));
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : String(value);
}

function StringEditor(props: FieldEditorProps & { common: Record<string, unknown> }) {
  const { schema, value, onChange, common } = props;
  // Once a field needed a textarea it keeps it: flipping back and forth while typing would be jarring.
  const [sticky, setSticky] = useState(false);
  const long = sticky || needsTextarea(schema, value);
  const hadFocus = useRef(false);
  const textarea = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => {
    if (!long || sticky) return;
    setSticky(true);
    // Typing past the threshold swaps the element; keep the caret where the reviewer was typing.
    const el = textarea.current;
    if (hadFocus.current && el) {
      el.focus();
      el.setSelectionRange(el.value.length, el.value.length);
    }
  }, [long, sticky]);
  const input = (e: Event) => {
    const v = (e.currentTarget as HTMLInputElement | HTMLTextAreaElement).value;
    hadFocus.current = document.activeElement === e.currentTarget;
    onChange(v === '' ? null : v);
  };
  const maxLength = 'maxLength' in schema ? schema.maxLength : undefined;
  if (long) return <textarea {...common} ref={textarea} rows={4} value={text(value)} maxLength={maxLength} onInput={input} />;
  return <input {...common} type="text" value={text(value)} maxLength={maxLength} onInput={input} />;
}

export function FieldEditor(props: FieldEditorProps) {
  const { schema, value, label, onChange, invalid, describedBy, disabled, id, required } = props;
  const warningId = useId();
  const kind = propertyKind(schema);
  // Free text keeps its real value, so what is sent is exactly what is there; the warning tells what does not show.
  const warn = kind === 'string' && typeof value === 'string' && hasHiddenCharacters(value);
  const common: Record<string, unknown> = {
    id,
    'aria-label': revealHidden(label),
    'aria-invalid': invalid ? 'true' : undefined,
    'aria-describedby': [describedBy, warn ? warningId : undefined].filter(Boolean).join(' ') || undefined,
    'aria-required': required ? 'true' : undefined,
    disabled,
  };
  switch (kind) {
    case 'string':
      return (
        <>
          <StringEditor {...props} common={common} />
          {warn && <HiddenCharactersWarning id={warningId} value={value} />}
        </>
      );
    case 'number':
    case 'integer': {
      const min = 'minimum' in schema ? schema.minimum : undefined;
      const max = 'maximum' in schema ? schema.maximum : undefined;
      return (
        <input
          {...common}
          type="number"
          min={min}
          max={max}
          step={kind === 'integer' ? 1 : 'any'}
          value={text(value)}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange(v === '' ? null : Number(v));
          }}
        />
      );
    }
    case 'boolean':
      return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case 'enum': {
      const options = enumOptions(schema);
      return (
        <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)}>
          <option value="">—</option>
          {options.map((o) => <option key={o.value} value={o.value}>{revealHidden(o.title)}</option>)}
        </select>
      );
    }
    case 'multi': {
      const options = enumOptions(schema);
      const chosen = Array.isArray(value) ? (value as unknown[]) : [];
      return (
        <select
          {...common}
          multiple
          size={Math.min(Math.max(options.length, 2), 6)}
          onChange={(e) => onChange(Array.from(e.currentTarget.options).filter((o) => o.selected).map((o) => o.value))}
        >
          {options.map((o) => <option key={o.value} value={o.value} selected={chosen.includes(o.value)}>{revealHidden(o.title)}</option>)}
        </select>
      );
    }
  }
}
