import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';
import { formatIssues } from '../../shared/field-issues.js';
import { checkRequestedSchema, validateValues } from '../../shared/requested-schema.js';

/**
 * The SDK's check of a host's accepted form answer (2025 era), done with the same rules the server applies to every
 * answer itself (shared/requested-schema.ts) instead of the SDK's default, Ajv: one set of rules with one wording, and
 * a start that does not load and set up a general JSON Schema compiler (Ajv was a third of the bundle).
 */
export class FormAnswerValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const checked = checkRequestedSchema(schema);
    return (input: unknown) => {
      if (!checked.ok) return { valid: false, data: undefined, errorMessage: `the requested schema is not one this server sends: ${formatIssues(checked.issues)}` };
      const values = validateValues(checked.schema, input, { prefix: 'content' });
      // The answer itself, not the checked copy: the SDK hands it on as the result, and the server checks it again.
      return values.ok ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: formatIssues(values.issues) };
    };
  }
}
