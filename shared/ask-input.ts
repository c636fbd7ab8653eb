// The asks (elicit_confirm, elicit_form, elicit_selection) when they go to the extension instead of the host's dialog:
// the normalized request that is stored and shown, the asks' input and output schemas (the tools list them, the review in
// the chat reads them), the check of elicit_selection's input, the check of an answer, and
// the result each ask returns (the seed shapes, plus `via`).
import * as z from 'zod';
import { LIMITS, nestingDepth } from './approval-input.js';
import { describe, duplicateOf, fromZod, isObject, issue, minExceedsMax, notOneOf, repeated, tooBig, tooLong, wrongType, type FieldIssue } from './field-issues.js';
import type { Outcome } from './lifecycle.js';
import { RequestedSchemaSchema, duplicates, validateValues, type RequestedSchema } from './requested-schema.js';
import { ReviewerNameSchema } from './reviewers.js';

const TIMEOUT_FALLBACK = 3600;
export const SELECTION_LIMITS = { options: 100, value: 200, label: 200, description: 1000 } as const;

export const ConfirmAskSchema = z.strictObject({
  kind: z.literal('confirm'),
  message: z.string(),
  /** The localized yes/no the agent chose (seed 000: `yesLabel`, `noLabel`). */
  labels: z.strictObject({ yes: z.string().min(1), no: z.string().min(1) }),
  timeoutSeconds: z.number(),
});
export type ConfirmAsk = z.infer<typeof ConfirmAskSchema>;

export const FormAskSchema = z.strictObject({
  kind: z.literal('form'),
  message: z.string(),
  requestedSchema: RequestedSchemaSchema,
  timeoutSeconds: z.number(),
});
export type FormAsk = z.infer<typeof FormAskSchema>;

const SelectionOptionSchema = z.strictObject({
  value: z.string().min(1).max(SELECTION_LIMITS.value),
  label: z.string().trim().min(1).max(SELECTION_LIMITS.label).optional(),
  description: z.string().trim().min(1).max(SELECTION_LIMITS.description).optional(),
});
export type SelectionOption = z.infer<typeof SelectionOptionSchema>;

export const SelectionAskSchema = z.strictObject({
  kind: z.literal('selection'),
  message: z.string(),
  options: z.array(SelectionOptionSchema).min(1).max(SELECTION_LIMITS.options),
  multiple: z.boolean(),
  /** Always set: 1 and 1 for a single choice. */
  minSelected: z.number().int().min(0),
  maxSelected: z.number().int().min(1),
  default: z.array(z.string()),
  timeoutSeconds: z.number(),
});
export type SelectionAsk = z.infer<typeof SelectionAskSchema>;

export type Ask = ConfirmAsk | FormAsk | SelectionAsk;

/** Where an ask goes: the host's dialog, the extension, or (auto) whichever really reaches the person. */
export const ViaSchema = z.enum(['auto', 'host', 'extension']);
export type Via = z.infer<typeof ViaSchema>;
/** Where an ask was answered, in its result. */
export const AnsweredViaSchema = z.enum(['host', 'extension', 'app', 'rule', 'phone']);

const ConfirmLabel = z.string().trim().min(1).max(40);
const ConfirmQuestion = z.string().trim().min(1).max(2000);

/** elicit_confirm's input: seed 000's names and the public product's, both. */
export const ElicitConfirmInputSchema = z.strictObject({
  question: ConfirmQuestion.optional().describe('The yes/no question, phrased so that "yes" means go ahead. Required (or `message`).'),
  yesLabel: ConfirmLabel.optional().describe('Text of the "yes" option, 1–40 characters (localize it: "Sí", "Oui"). Default "Yes".'),
  noLabel: ConfirmLabel.optional().describe('Text of the "no" option, 1–40 characters. Default "No".'),
  message: ConfirmQuestion.optional().describe('The same as `question`, in the public Elicitly product\'s shape (with `labels`).'),
  labels: z.strictObject({ ok: ConfirmLabel.optional(), cancel: ConfirmLabel.optional() }).optional().describe('The same as yesLabel/noLabel, in the public product\'s shape.'),
  via: ViaSchema.optional().describe('"auto" (default): the host\'s dialog when it really shows one, else the Elicitly extension. "host" or "extension" force one.'),
  waitSeconds: z.number().optional().describe('How long an extension-routed question waits in this call. Default 50, clamped to 1–600; then "pending".'),
  timeoutSeconds: z.number().optional().describe('How long the person has: the host dialog waits this long (default 300, 60–3600); an extension request stays answerable this long (default 3600, 60–86400).'),
});
export type ElicitConfirmInput = z.infer<typeof ElicitConfirmInputSchema>;

/**
 * Seed 000's names and the public product's (`message`, `labels.ok/cancel`) are both accepted; where both name the same
 * thing the seed's win. Taking the question from one and the labels from the other is refused: a caller doing that is
 * confused about which shape it speaks.
 */
export function resolveConfirmInput(args: ElicitConfirmInput): { ok: true; question: string; yes: string; no: string } | { ok: false; issues: FieldIssue[] } {
  const question = args.question ?? args.message;
  if (question === undefined) return { ok: false, issues: [issue(['question'], 'missing', 'is required (or `message`): the yes/no question to ask')] };
  const seedLabels = args.yesLabel !== undefined || args.noLabel !== undefined;
  if (args.question !== undefined && args.message === undefined && args.labels !== undefined && !seedLabels) {
    return { ok: false, issues: [issue(['labels'], 'mixed_shapes', 'belongs with `message` (the public product\'s shape); with `question`, use yesLabel and noLabel')] };
  }
  if (args.message !== undefined && args.question === undefined && seedLabels && args.labels === undefined) {
    const path = args.yesLabel !== undefined ? 'yesLabel' : 'noLabel';
    return { ok: false, issues: [issue([path], 'mixed_shapes', 'belongs with `question` (seed 000\'s shape); with `message`, use labels.ok and labels.cancel')] };
  }
  const yes = args.yesLabel ?? (seedLabels ? undefined : args.labels?.ok) ?? 'Yes';
  const no = args.noLabel ?? (seedLabels ? undefined : args.labels?.cancel) ?? 'No';
  return { ok: true, question, yes, no };
}

/** elicit_form's input; `requestedSchema` is checked by `checkRequestedSchema`, which names the property at fault. */
export const ElicitFormInputSchema = z.strictObject({
  message: z.string().trim().min(1).max(4000).describe('What the person is asked, shown above the form.'),
  requestedSchema: z
    .record(z.string(), z.unknown())
    .describe('A flat JSON Schema object (MCP elicitation subset): string, number, integer, boolean, single- and multi-select enum properties.'),
  via: ViaSchema.optional().describe('"auto" (default): the host\'s dialog when it really shows one, else the Elicitly extension. "host" or "extension" force one.'),
  waitSeconds: z.number().optional().describe('How long an extension-routed form waits in this call. Default 50, clamped to 1–600; then "pending".'),
  timeoutSeconds: z.number().optional().describe('How long the person has: the host dialog waits this long (default 300, 60–3600); an extension request stays answerable this long (default 3600, 60–86400).'),
});

/** elicit_confirm's result: seed 000's `confirmed` and `action`, plus `pending` and `via` (docs/tools.md). */
export const ElicitConfirmOutputSchema = z.looseObject({
  confirmed: z.boolean().nullable(),
  action: z.enum(['accept', 'decline', 'cancel', 'pending']).optional(),
  question: z.string().optional(),
  error: z.string().optional(),
  next: z.string().optional(),
  via: AnsweredViaSchema.optional(),
});

/** The result of elicit_form and elicit_selection: the seed's `action` and answer, plus `pending` and `via` (docs/tools.md). */
function askOutputSchema<Answer extends z.ZodRawShape>(answer: Answer) {
  return z.looseObject({
    action: z.enum(['accept', 'decline', 'cancel', 'error', 'pending']),
    ...answer,
    error: z.string().optional(),
    next: z.string().optional(),
    via: AnsweredViaSchema.optional(),
  });
}

export const ElicitFormOutputSchema = askOutputSchema({ content: z.record(z.string(), z.unknown()).nullable() });
export const ElicitSelectionOutputSchema = askOutputSchema({ selected: z.array(z.string()).nullable() });

/** Seconds an extension-routed ask waits in the tool call: under the ~60 s tool-call limit of common hosts. */
export const WAIT = { fallback: 50, min: 1, max: 600 } as const;

export const ElicitSelectionInputSchema = z.strictObject({
  message: z.string().trim().min(1).max(4000),
  options: z.array(SelectionOptionSchema).min(1).max(SELECTION_LIMITS.options),
  multiple: z.boolean().optional(),
  minSelected: z.number().int().min(0).optional(),
  maxSelected: z.number().int().min(1).optional(),
  default: z.array(z.string()).optional(),
  timeoutSeconds: z.number().optional(),
  waitSeconds: z.number().optional(),
  via: ViaSchema.optional(),
});
export type ElicitSelectionInput = z.infer<typeof ElicitSelectionInputSchema>;

type Checked<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** elicit_selection's input, checked and normalized; every refusal names the field and the rule. */
export function checkSelectionInput(input: unknown): Checked<{ ask: SelectionAsk; waitSeconds: number | undefined; via: Via }> {
  if (!isObject(input)) return { ok: false, issues: [issue([], 'not_object', wrongType('an object of named parameters', input))] };
  const deep = Object.entries(input).filter(([, v]) => nestingDepth(v, LIMITS.depth) > LIMITS.depth);
  if (deep.length) return { ok: false, issues: deep.map(([k]) => issue([k], 'too_deep', `nests arrays and objects more than ${LIMITS.depth} levels deep; the limit is ${LIMITS.depth}`)) };
  const parsed = ElicitSelectionInputSchema.safeParse(input);
  if (!parsed.success) return { ok: false, issues: fromZod(ElicitSelectionInputSchema, parsed.error.issues, input) };
  const data = parsed.data;
  const issues: FieldIssue[] = [];
  const values = data.options.map((o) => o.value);
  for (const [i, first] of duplicates(values)) issues.push(issue(['options', i, 'value'], 'duplicate', duplicateOf(values[i], `options[${first}].value`)));
  const multiple = data.multiple ?? false;
  if (!multiple) {
    for (const key of ['minSelected', 'maxSelected'] as const) {
      if (data[key] !== undefined && data[key] !== 1) issues.push(issue([key], 'needs_multiple', `applies only with multiple: true (a single choice picks exactly one)`));
    }
  }
  const minSelected = multiple ? (data.minSelected ?? 0) : 1;
  const maxSelected = multiple ? (data.maxSelected ?? values.length) : 1;
  for (const key of ['minSelected', 'maxSelected'] as const) {
    const n = data[key];
    if (n !== undefined && n > values.length) issues.push(issue([key], 'too_big', `${tooBig(values.length, n)} (there are ${values.length} options)`));
  }
  if (minSelected > maxSelected) issues.push(issue(['minSelected'], 'min_exceeds_max', minExceedsMax('minSelected', minSelected, 'maxSelected', maxSelected)));
  const defaults = data.default ?? [];
  const known = new Set(values);
  const chosen = new Map<string, number>();
  defaults.forEach((v, i) => {
    const seen = chosen.get(v);
    if (!known.has(v)) issues.push(issue(['default', i], 'not_an_option', notOneOf(values, v)));
    else if (seen !== undefined) issues.push(issue(['default', i], 'duplicate', duplicateOf(v, `default[${seen}]`)));
    else chosen.set(v, i);
  });
  if (defaults.length > maxSelected) issues.push(issue(['default'], 'too_many', tooLong(maxSelected, defaults.length, 'entry')));
  if (issues.length) return { ok: false, issues };
  return {
    ok: true,
    value: {
      ask: {
        kind: 'selection',
        message: data.message,
        options: data.options,
        multiple,
        minSelected,
        maxSelected,
        default: defaults,
        // Clamped where it becomes a deadline, against the server's configured minimum.
        timeoutSeconds: data.timeoutSeconds ?? TIMEOUT_FALLBACK,
      },
      waitSeconds: data.waitSeconds,
      via: data.via ?? 'auto',
    },
  };
}

/** Why a selection is not acceptable, or [] when it is: each value an option, no repeats, the count within bounds. */
export function selectionIssues(ask: SelectionAsk, selected: unknown, prefix = 'values.selected'): FieldIssue[] {
  const at = prefix.split('.');
  if (!Array.isArray(selected)) return [issue(at, 'invalid_type', wrongType('a list of option values', selected))];
  const odd: unknown = selected.find((v) => typeof v !== 'string');
  if (selected.some((v) => typeof v !== 'string')) return [issue(at, 'invalid_type', `must be a list of option values, got ${describe(odd)} in it`)];
  const values = ask.options.map((o) => o.value);
  const known = new Set(values);
  const chosen = new Set<string>();
  const issues: FieldIssue[] = [];
  selected.forEach((v: string, i) => {
    if (!known.has(v)) issues.push(issue([...at, i], 'not_an_option', notOneOf(values, v)));
    else if (chosen.has(v)) issues.push(issue([...at, i], 'duplicate', repeated(v)));
    chosen.add(v);
  });
  if (selected.length < ask.minSelected) issues.push(issue(at, 'too_few', ask.multiple ? `choose at least ${ask.minSelected}` : 'choose one'));
  if (selected.length > ask.maxSelected) issues.push(issue(at, 'too_many', ask.multiple ? `choose at most ${ask.maxSelected}` : 'choose only one'));
  return issues;
}

/** The person's answer to an ask, checked against it: what the hub records as the approved values. */
export function checkAskValues(ask: Ask, values: unknown): { ok: true; values: Record<string, unknown> } | { ok: false; issues: FieldIssue[] } {
  if (ask.kind === 'form') return validateValues(ask.requestedSchema, values, { prefix: 'values' });
  if (!isObject(values)) return { ok: false, issues: [issue(['values'], 'not_object', wrongType('an object', values))] };
  if (ask.kind === 'confirm') {
    if (typeof values.confirmed !== 'boolean') return { ok: false, issues: [issue(['values', 'confirmed'], 'invalid_type', 'must be true (yes) or false (no)')] };
    return { ok: true, values: { confirmed: values.confirmed } };
  }
  const issues = selectionIssues(ask, values.selected);
  return issues.length ? { ok: false, issues } : { ok: true, values: { selected: values.selected } };
}

/** The seed shape each ask returns once the person answered in the extension (or dismissed it), plus `via`. */
/** Answered by a person in the companion: in the extension, or in the review shown inside the chat. */
const CompanionViaSchema = z.enum(['extension', 'app', 'rule', 'phone']);
/** On a team's hub, the reviewer whose paired browser or phone answered. */
const AnsweredBySchema = ReviewerNameSchema.optional();
export const AskResultSchema = z.union([
  z.strictObject({ confirmed: z.boolean(), action: z.enum(['accept', 'decline']), via: CompanionViaSchema, decidedBy: AnsweredBySchema }),
  z.strictObject({ action: z.enum(['accept', 'decline']), content: z.record(z.string(), z.unknown()).nullable(), via: CompanionViaSchema, decidedBy: AnsweredBySchema }),
  z.strictObject({ action: z.enum(['accept', 'decline']), selected: z.array(z.string()).nullable(), via: CompanionViaSchema, decidedBy: AnsweredBySchema }),
]);
export type AskResult = z.infer<typeof AskResultSchema>;

export function askResult(ask: Ask, outcome: Outcome): AskResult {
  const accepted = outcome.decision === 'approved';
  const values = outcome.values ?? {};
  const via = outcome.decidedVia ?? 'extension';
  const by = outcome.decidedBy === undefined ? {} : { decidedBy: outcome.decidedBy };
  if (ask.kind === 'confirm') return { confirmed: accepted && values.confirmed === true, action: accepted ? 'accept' : 'decline', via, ...by };
  if (ask.kind === 'form') return { action: accepted ? 'accept' : 'decline', content: accepted ? values : null, via, ...by };
  const selected = values.selected;
  return { action: accepted ? 'accept' : 'decline', selected: accepted && Array.isArray(selected) ? selected.filter((v): v is string => typeof v === 'string') : null, via, ...by };
}

const SELECTION_FIELD = 'selection';

/**
 * The selection as a host dialog shows it: the 2025-11-25 titled enums (`oneOf` const/title for one choice, an array of
 * `anyOf` for several). Descriptions have no place there; the extension shows them.
 */
export function selectionRequestedSchema(ask: SelectionAsk): RequestedSchema {
  const titled = ask.options.map((o) => ({ const: o.value, title: o.label ?? o.value }));
  const property = ask.multiple
    ? { type: 'array' as const, title: 'Choose', items: { anyOf: titled }, minItems: ask.minSelected, maxItems: ask.maxSelected, ...(ask.default.length ? { default: ask.default } : {}) }
    : { type: 'string' as const, title: 'Choose one', oneOf: titled, ...(ask.default[0] !== undefined ? { default: ask.default[0] } : {}) };
  return { type: 'object', properties: { [SELECTION_FIELD]: property }, required: [SELECTION_FIELD] };
}

/** The host's accepted form, read back as the list of chosen values (one element for a single choice). */
export function selectedFromHost(ask: SelectionAsk, content: Record<string, unknown>): string[] | null {
  const value = Object.hasOwn(content, SELECTION_FIELD) ? content[SELECTION_FIELD] : undefined;
  const selected = ask.multiple ? value : typeof value === 'string' ? [value] : undefined;
  return Array.isArray(selected) && selectionIssues(ask, selected).length === 0 ? selected.filter((v): v is string => typeof v === 'string') : null;
}
