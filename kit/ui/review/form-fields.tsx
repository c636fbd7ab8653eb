import { useId } from 'preact/hooks';
import { constraintHint } from '../../core/format-editors.js';
import { enumOptions, propertyKind, type PropertySchema, type RequestedSchema } from '../../../shared/requested-schema.js';
import { FieldEditor } from './field-editor.js';
import type { SplitIssues } from './decision-feedback.js';
import { VisibleText } from '../visible-text.js';

/** Keyed by the agent's property names, hence a Map; a refused attempt's values win over the defaults. */
export function initialValues(schema: RequestedSchema | null, attempt: Readonly<Record<string, unknown>> | undefined): Map<string, unknown> {
  if (!schema) return new Map();
  return new Map(Object.entries(schema.properties).map(([key, p]) => {
    if (attempt && Object.hasOwn(attempt, key)) return [key, attempt[key]];
    // An unticked box reads as "no" to a reviewer, so it must not be submitted as "left empty".
    const fallback = propertyKind(p) === 'boolean' ? false : null;
    return [key, p.default ?? fallback];
  }));
}

/**
 * A multi-select field as a group of checkboxes, the way elicit_selection shows several options (a list box hides
 * what is chosen once it scrolls, and needs Ctrl-click). A value that is not an option stays, ticked and named as such.
 */
function ChoiceGroup({ id, schema, title, value, required, invalid, describedBy, onChange }: {
  id: string;
  schema: PropertySchema;
  title: string;
  value: unknown;
  required: boolean;
  invalid: boolean;
  describedBy: string | undefined;
  onChange(v: string[]): void;
}) {
  const options = enumOptions(schema);
  const chosen = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const others = chosen.filter((v) => !options.some((o) => o.value === v));
  const hint = constraintHint(schema);
  const hintId = `${id}-hint`;
  const all = [...options.map((o) => ({ value: o.value, title: o.title, other: false })), ...others.map((v) => ({ value: v, title: v, other: true }))];
  // In the options' order whatever the order of the ticks, as the list box this replaced sent them.
  const toggle = (option: string, on: boolean) => onChange(all.map((o) => o.value).filter((v) => (v === option ? on : chosen.includes(v))));
  return (
    <fieldset
      class="choices"
      id={id}
      aria-describedby={[describedBy, hint ? hintId : ''].filter(Boolean).join(' ') || undefined}
    >
      <legend>
        <VisibleText text={title} />
        {required && <span class="required" aria-hidden="true">*</span>}
        <span class="muted"> · {chosen.length} chosen</span>
      </legend>
      {all.map((o, i) => (
        <div class="choice" key={o.value}>
          <input type="checkbox" id={`${id}-option-${i}`} value={o.value} checked={chosen.includes(o.value)} aria-invalid={invalid ? 'true' : undefined} onChange={(e) => toggle(o.value, e.currentTarget.checked)} />
          <label for={`${id}-option-${i}`}><VisibleText text={o.title} />{o.other && ' (not an option)'}</label>
        </div>
      ))}
      {hint && <div id={hintId} class="field-hint">{hint}</div>}
    </fieldset>
  );
}

/**
 * A requestedSchema as a form, one labelled editor per property with its description, hints and messages: the same
 * for a form-mode approval and a form ask, so both check and show values alike.
 */
export function FormFields({ schema, values, issues, onEdit }: {
  schema: RequestedSchema;
  values: ReadonlyMap<string, unknown>;
  issues: SplitIssues;
  onEdit(key: string, value: unknown): void;
}) {
  const id = useId();
  const required = schema.required ?? [];
  return (
    <div class="approval-form">
      {Object.entries(schema.properties).map(([key, p], i) => {
        const title = p.title ?? key;
        const inputId = `${id}-field-${i}`;
        const errors = issues.byKey.get(key);
        const errorId = `${id}-error-${i}`;
        const descId = `${id}-desc-${i}`;
        const describedBy = [p.description ? descId : '', errors ? errorId : ''].filter(Boolean).join(' ');
        const isRequired = required.includes(key);
        const description = p.description && <div id={descId} class="description muted"><VisibleText text={p.description} /></div>;
        const error = errors && <div id={errorId} class="field-error"><VisibleText text={errors.join(' ')} /></div>;
        const kind = propertyKind(p);
        if (kind === 'multi') {
          return (
            <div class="field" key={key}>
              <ChoiceGroup
                id={inputId}
                schema={p}
                title={title}
                value={values.get(key)}
                required={isRequired}
                invalid={errors !== undefined}
                describedBy={describedBy || undefined}
                onChange={(v) => onEdit(key, v)}
              />
              {description}
              {error}
            </div>
          );
        }
        const label = (
          <label for={inputId}>
            <VisibleText text={title} />
            {isRequired && <span class="required" aria-hidden="true">*</span>}
          </label>
        );
        const editor = (
          <FieldEditor
            id={inputId}
            schema={p}
            value={values.get(key)}
            label={title}
            required={isRequired}
            invalid={errors !== undefined}
            describedBy={describedBy || undefined}
            onChange={(v) => onEdit(key, v)}
          />
        );
        // A checkbox goes before its label, on the same line, as every other checkbox of the review does.
        if (kind === 'boolean') return <div class="field boolean" key={key}>{editor}{label}{description}{error}</div>;
        return <div class="field" key={key}>{label}{description}{editor}{error}</div>;
      })}
    </div>
  );
}
