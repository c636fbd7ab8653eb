import { useId } from 'preact/hooks';
import { propertyKind, type RequestedSchema } from '../../../shared/requested-schema.js';
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
        return (
          <div class="field" key={key}>
            <label for={inputId}>
              <VisibleText text={title} />
              {isRequired && <span class="required" aria-hidden="true">*</span>}
            </label>
            {p.description && <div id={descId} class="description muted"><VisibleText text={p.description} /></div>}
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
            {errors && <div id={errorId} class="field-error"><VisibleText text={errors.join(' ')} /></div>}
          </div>
        );
      })}
    </div>
  );
}
