import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  constraintHint, fitsInput, fromLocalDateTime, inputTypeFor, localTimeHint, toLocalDateTime, type TextInputType,
} from '../../core/format-editors.js';
import { enumOptions, propertyKind, type PropertySchema } from '../../../shared/requested-schema.js';
import { hasHiddenCharacters, revealHidden } from '../../core/visible-text.js';
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

type Common = Record<string, unknown>;

const LONG_TEXT = 80;

/**
 * What an editor reports when the browser cannot read what is typed (a half-typed number or date: the input's value is
 * then empty although the box is not). Neither null nor the previous value would be what the box shows; NaN is refused
 * by the validator, so the field is flagged and nothing is sent until the box holds a value.
 */
const UNREADABLE = Number.NaN;

function needsTextarea(schema: PropertySchema, value: unknown): boolean {
  if ('maxLength' in schema && schema.maxLength !== undefined && schema.maxLength > 200) return true;
  return typeof value === 'string' && (value.length > LONG_TEXT || value.includes('\n'));
}

function text(value: unknown): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '';
  return typeof value === 'string' ? value : String(value);
}

function read(el: HTMLInputElement | HTMLTextAreaElement): unknown {
  if ('validity' in el && el.validity.badInput) return UNREADABLE;
  return el.value === '' ? null : el.value;
}

function TextEditor({ schema, value, onChange, common }: FieldEditorProps & { common: Common }) {
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
    const el = e.currentTarget as HTMLInputElement | HTMLTextAreaElement;
    hadFocus.current = document.activeElement === el;
    onChange(read(el));
  };
  // No maxLength attribute: the browser counts UTF-16 units where the validator counts characters; the hint and the
  // live check say the limit instead.
  if (long) return <textarea {...common} ref={textarea} rows={4} value={text(value)} onInput={input} />;
  return <input {...common} type="text" value={text(value)} onInput={input} />;
}

/**
 * Local time in the box, RFC 3339 with the person's offset in the value. A value the agent gave is kept as it is until
 * the person edits it, so an untouched default reaches the agent exactly as written, whatever its offset.
 */
function DateTimeEditor({ value, onChange, common }: { value: unknown; onChange(v: unknown): void; common: Common }) {
  const local = typeof value === 'string' ? toLocalDateTime(value) : null;
  // Seconds stay visible once a value had them, so the box does not change shape while the person edits them.
  const step = useRef<number | undefined>(undefined);
  if (local?.step !== undefined) step.current = Math.min(local.step, step.current ?? 1);
  return (
    <input
      {...common}
      type="datetime-local"
      value={local?.value ?? ''}
      step={step.current}
      onInput={(e) => {
        const v = read(e.currentTarget);
        onChange(typeof v === 'string' ? (fromLocalDateTime(v) ?? UNREADABLE) : v);
      }}
    />
  );
}

function NumberEditor({ schema, value, onChange, common }: FieldEditorProps & { common: Common }) {
  // The box keeps what was typed while it means the value held ("2.50" is 2.5), so typing is not rewritten under the caret.
  const typed = useRef('');
  const shown = typeof value === 'number' && typed.current !== '' && Number(typed.current) === value ? typed.current : text(value);
  return (
    <input
      {...common}
      type="number"
      min={'minimum' in schema ? schema.minimum : undefined}
      max={'maximum' in schema ? schema.maximum : undefined}
      step={schema.type === 'integer' ? 1 : 'any'}
      value={shown}
      onInput={(e) => {
        const el = e.currentTarget;
        typed.current = el.value;
        const v = read(el);
        onChange(typeof v === 'string' ? Number(v) : v);
      }}
    />
  );
}

/** A value that is not an option still shows, named as such, so the control shows what would be sent. */
function notAnOption(v: string) {
  return <option key={`not-${v}`} value={v} selected>{`${revealHidden(v)} (not an option)`}</option>;
}

export function FieldEditor(props: FieldEditorProps) {
  const { schema, value, label, onChange, invalid, describedBy, disabled, id, required } = props;
  const warningId = useId();
  const hintId = useId();
  const kind = propertyKind(schema);
  const format: TextInputType = kind === 'string' ? inputTypeFor(schema) : 'text';
  // A value the typed input would alter or blank (surrounding spaces in an email, a date that is not one) is shown in a
  // text box instead; once, for good, so the element does not change under the person's typing.
  const plain = useRef(false);
  if (typeof value === 'string' && !fitsInput(format, value)) plain.current = true;
  const type = plain.current ? 'text' : format;
  const hint = type === 'datetime-local' ? localTimeHint(value) : constraintHint(schema);
  // Free text keeps its real value, so what is sent is exactly what is there; the warning tells what does not show.
  const warn = kind === 'string' && typeof value === 'string' && hasHiddenCharacters(value);
  const common: Common = {
    id,
    'aria-label': revealHidden(label),
    'aria-invalid': invalid ? 'true' : undefined,
    'aria-describedby': [describedBy, hint ? hintId : undefined, warn ? warningId : undefined].filter(Boolean).join(' ') || undefined,
    'aria-required': required ? 'true' : undefined,
    disabled,
  };
  const after = (
    <>
      {hint && <div id={hintId} class="field-hint">{hint}</div>}
      {warn && <HiddenCharactersWarning id={warningId} value={value} />}
    </>
  );
  switch (kind) {
    case 'string': {
      let editor;
      if (type === 'text') editor = <TextEditor {...props} common={common} />;
      else if (type === 'datetime-local') editor = <DateTimeEditor value={value} onChange={onChange} common={common} />;
      else {
        // email, url or date: one element for the three, so the attribute travels untyped (Preact types each apart).
        const typed: Common = { ...common, type };
        editor = <input {...typed} value={text(value)} onInput={(e) => onChange(read(e.currentTarget))} />;
      }
      return <>{editor}{after}</>;
    }
    case 'number':
    case 'integer':
      return <><NumberEditor {...props} common={common} />{after}</>;
    case 'boolean':
      return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case 'enum': {
      const options = enumOptions(schema);
      const other = typeof value === 'string' && !options.some((o) => o.value === value) ? value : null;
      return (
        <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)}>
          <option value="">—</option>
          {options.map((o) => <option key={o.value} value={o.value}>{revealHidden(o.title)}</option>)}
          {other !== null && notAnOption(other)}
        </select>
      );
    }
    case 'multi': {
      const options = enumOptions(schema);
      const chosen = Array.isArray(value) ? (value as unknown[]) : [];
      const others = chosen.filter((v): v is string => typeof v === 'string' && !options.some((o) => o.value === v));
      return (
        <>
          <select
            {...common}
            multiple
            size={Math.min(Math.max(options.length + others.length, 2), 6)}
            onChange={(e) => onChange(Array.from(e.currentTarget.options).filter((o) => o.selected).map((o) => o.value))}
          >
            {options.map((o) => <option key={o.value} value={o.value} selected={chosen.includes(o.value)}>{revealHidden(o.title)}</option>)}
            {others.map(notAnOption)}
          </select>
          {after}
        </>
      );
    }
  }
}
