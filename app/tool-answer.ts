// What the view shows for the tool result the host handed it: a request to review, or the result in sentences a person
// reads. Every result the tools give is JSON (`structuredContent`, and the same JSON as text); none of it is shown raw.
import * as z from 'zod';
import {
  APP_META_KEY, AppDecideResultSchema, AppErrorSchema, AppResultMetaSchema, AppViewInputSchema, AppViewResultSchema, type AppError, type AppViewResult,
} from '../shared/app-surface.js';
import {
  ElicitConfirmInputSchema, ElicitConfirmOutputSchema, ElicitFormInputSchema, ElicitFormOutputSchema, ElicitSelectionOutputSchema,
  checkSelectionInput, resolveConfirmInput, type AnsweredViaSchema,
} from '../shared/ask-input.js';
import type { DecidedVia } from '../shared/lifecycle.js';
import { checkRequestedSchema, type PropertySchema } from '../shared/requested-schema.js';
import { DecisionRefusalSchema, ElicitationIdSchema } from '../shared/wire-fields.js';
import { optionName } from '../kit/ui/ask-words.js';
import { dateTime } from '../kit/ui/format-time.js';
import { REFUSAL_TEXT } from '../kit/ui/labels.js';
import { displayValue } from '../kit/ui/review/display-value.js';
import { appErrorText, resultText, type CallToolResult } from './app-client.js';

/** A tool result in words. */
export interface Said {
  tone: 'answer' | 'error';
  /** What was asked (the question, the form's or the choice's message), when the input or the result says. */
  asked?: string;
  text: string;
  /** A form's answer: each field's title and the value given, in the form's order. */
  fields?: { name: string; value: string }[];
  /** More sentences: what the agent is told to do next, a refusal's hint or issues, who decided. */
  notes?: string[];
  /** What the tool returned, as text, for a result this view cannot read: shown on request, never as HTML. */
  returned?: string;
}

/** What a tool result asks the view to show. */
export type Target =
  /** A request to review, decidable with its single-use key (`null`: read-only). */
  | { kind: 'review'; elicitationId: string; token: string | null }
  /** `elicit_app_view`'s own result, rendered as the view: the request it read, read-only. */
  | { kind: 'request'; result: AppViewResult }
  | { kind: 'said'; said: Said };

type AnsweredVia = z.infer<typeof AnsweredViaSchema>;

const WithIdSchema = z.looseObject({ elicitationId: ElicitationIdSchema });
const JsonObjectSchema = z.record(z.string(), z.unknown());

/** The server's refusal (`ToolErrorSchema` in server/mcp/tool-result.ts, docs/tools.md), as far as the view needs it. */
const RefusalSchema = z.looseObject({
  error: z.string(),
  message: z.string(),
  hint: z.string().optional(),
});

/** Where an ask was answered, as the person reads it: the host's own dialog and the review in the chat are both the chat. */
const WHERE: Record<AnsweredVia, string> = {
  host: 'in the chat',
  extension: 'in the Elicitly browser extension',
  app: 'in the chat',
  // The person's own rule answered it when it was asked (a confirm ask can match one).
  rule: 'by one of your rules',
  phone: 'on a paired phone',
};

const NOUN = { confirm: 'question', form: 'form', selection: 'choice' } as const;

/** Ends a sentence that does not end already. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?…]$/.test(t) ? t : `${t}.`;
}

function where(via: AnsweredVia | undefined): string {
  return via ? ` ${WHERE[via]}` : '';
}

/** The result's JSON: `structuredContent`, or the same JSON in its text when the host passed only that. */
function structuredOf(result: CallToolResult): Record<string, unknown> | undefined {
  const given = JsonObjectSchema.safeParse(result.structuredContent);
  if (given.success) return given.data;
  const text = resultText(result);
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JsonObjectSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The text a result carried, for the "Show what the tool returned" disclosure: JSON indented, anything else as it came. */
function returnedText(result: CallToolResult, structured: Record<string, unknown> | undefined): string {
  const text = resultText(result);
  if (text && structured === undefined) return text;
  return JSON.stringify(structured ?? {}, null, 2);
}

type Answer = {
  action?: 'accept' | 'decline' | 'cancel' | 'error' | 'pending' | undefined;
  error?: string | undefined;
  next?: string | undefined;
  via?: AnsweredVia | undefined;
};

/** Declined, dismissed or failed: the same words for every ask; `null` for an accepted answer (said by kind). */
function unanswered(kind: keyof typeof NOUN, answer: Answer, asked: string | undefined): Said | null {
  const base = { ...(asked ? { asked } : {}), ...(answer.next ? { notes: [answer.next] } : {}) };
  if (answer.error !== undefined) return { tone: 'error', text: sentence(`Not answered: ${answer.error}`), ...base };
  if (answer.action === 'decline') return { tone: 'answer', text: `Declined${where(answer.via)}.`, ...base };
  if (answer.action === 'cancel') {
    // From the extension's side, "cancel" is the answer nobody gave: the request expired or the agent withdrew it.
    const text = answer.via === 'extension' || answer.via === 'app'
      ? `Not answered: the ${NOUN[kind]} expired or was withdrawn before anyone answered it.`
      : `Dismissed${where(answer.via)} without an answer.`;
    return { tone: 'answer', text, ...base };
  }
  return null;
}

function confirmSaid(answer: z.infer<typeof ElicitConfirmOutputSchema>, input: unknown): Said {
  const parsed = ElicitConfirmInputSchema.safeParse(input);
  const resolved = parsed.success ? resolveConfirmInput(parsed.data) : null;
  // Without the input, the words every question has by default (elicit_confirm's own defaults).
  const labels = resolved?.ok ? { yes: resolved.yes, no: resolved.no } : { yes: 'Yes', no: 'No' };
  const asked = resolved?.ok ? resolved.question : answer.question;
  const other = unanswered('confirm', answer, asked);
  if (other) return other;
  const base = { ...(asked ? { asked } : {}), ...(answer.next ? { notes: [answer.next] } : {}) };
  if (answer.confirmed === null) return { tone: 'answer', text: `Not answered${where(answer.via)}.`, ...base };
  return { tone: 'answer', text: sentence(`Answered${where(answer.via)}: ${answer.confirmed ? labels.yes : labels.no}`), ...base };
}

function formSaid(answer: z.infer<typeof ElicitFormOutputSchema>, input: unknown): Said {
  const parsed = ElicitFormInputSchema.safeParse(input);
  const schema = parsed.success ? checkRequestedSchema(parsed.data.requestedSchema) : null;
  const properties: Record<string, PropertySchema> = schema?.ok ? schema.schema.properties : {};
  const asked = parsed.success ? parsed.data.message : undefined;
  const other = unanswered('form', answer, asked);
  if (other) return other;
  const base = { ...(asked ? { asked } : {}), ...(answer.next ? { notes: [answer.next] } : {}) };
  const content = answer.content ?? {};
  // The form's order first, then anything the answer has that the form (as this view knows it) does not.
  const keys = [...Object.keys(properties).filter((k) => Object.hasOwn(content, k)), ...Object.keys(content).filter((k) => !Object.hasOwn(properties, k))];
  if (keys.length === 0) return { tone: 'answer', text: `Answered${where(answer.via)}, with no values.`, ...base };
  const fields = keys.map((key) => {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    const value = displayValue(property, content[key]);
    return { name: property?.title ?? key, value: value === '' ? '(empty)' : value };
  });
  return { tone: 'answer', text: `Answered${where(answer.via)}:`, fields, ...base };
}

function selectionSaid(answer: z.infer<typeof ElicitSelectionOutputSchema>, input: unknown): Said {
  const checked = checkSelectionInput(input);
  const ask = checked.ok ? checked.value.ask : null;
  const asked = ask?.message;
  const other = unanswered('selection', answer, asked);
  if (other) return other;
  const base = { ...(asked ? { asked } : {}), ...(answer.next ? { notes: [answer.next] } : {}) };
  const selected = answer.selected ?? [];
  if (selected.length === 0) return { tone: 'answer', text: `Answered${where(answer.via)}, choosing none of the options.`, ...base };
  const names = selected.map((value) => {
    const option = ask?.options.find((o) => o.value === value);
    return option ? optionName(option) : value;
  });
  return { tone: 'answer', text: sentence(`Chose${where(answer.via)}: ${names.join(', ')}`), ...base };
}

const DECIDED_WHERE: Record<DecidedVia, string> = { app: 'in the chat', extension: 'in the browser extension', rule: 'by one of your rules', phone: 'on a paired phone' };

function decidedNote(decided: { via: DecidedVia; at: number }): string {
  return `Decided ${DECIDED_WHERE[decided.via]} at ${dateTime(decided.at)}.`;
}

/** An app-only tool's refusal in words: `elicit_app_view`'s about reading, `elicit_app_decide`'s about deciding. */
export function viewErrorText({ error }: AppError): string {
  if (error.code === 'not_in_app') return `Decide this in the Elicitly browser extension: it was not made for review in this chat. (${error.message})`;
  return `The request could not be read (${error.code}: ${error.message}).`;
}

function errorSaid(result: CallToolResult, structured: Record<string, unknown> | undefined, input: unknown): Said {
  const appError = AppErrorSchema.safeParse(structured);
  if (appError.success) {
    const { error, issues, decided } = appError.data;
    const ofView = AppViewInputSchema.safeParse(input).success;
    // A decision the engine refused, in the review's own words, with the issues and who decided first.
    const reason = DecisionRefusalSchema.safeParse(error.code);
    if (reason.success && !ofView) {
      const notes = [...(issues ?? []).map((i) => i.message), ...(decided ? [decidedNote(decided)] : [])];
      return { tone: 'error', text: REFUSAL_TEXT[reason.data], ...(notes.length ? { notes } : {}) };
    }
    const text = ofView ? viewErrorText(appError.data) : appErrorText(appError.data);
    return { tone: 'error', text };
  }
  const refusal = RefusalSchema.safeParse(structured);
  if (refusal.success) {
    const { message, hint } = refusal.data;
    return { tone: 'error', text: sentence(`The tool refused the call: ${message}`), ...(hint ? { notes: [hint] } : {}) };
  }
  const text = resultText(result);
  // Words the SDK wrote itself (an unknown tool, arguments it refused) are shown as they are.
  if (structured === undefined) return { tone: 'error', text: text || 'The tool call failed.' };
  return { tone: 'error', text: 'The tool call failed.', returned: returnedText(result, structured) };
}

/**
 * What to show for `result`; `input` is the tool's arguments as the host passed them (`toolinput`), for the agent's
 * own words: a question's labels, a form's field titles, a choice's option labels. Without them the answer is still
 * said, in the default words.
 */
export function targetOf(result: CallToolResult, input?: unknown): Target {
  const meta = AppResultMetaSchema.safeParse(result._meta?.[APP_META_KEY]);
  if (meta.success) return { kind: 'review', elicitationId: meta.data.elicitationId, token: meta.data.token };
  const structured = structuredOf(result);
  if (result.isError) return { kind: 'said', said: errorSaid(result, structured, input) };
  // A host that drops result _meta: the request is still shown, read-only. An ask the host answered itself has no id.
  const id = WithIdSchema.safeParse(structured);
  if (id.success) return { kind: 'review', elicitationId: id.data.elicitationId, token: null };
  if (structured === undefined && resultText(result) === '') return { kind: 'said', said: { tone: 'answer', text: 'Answered. There is nothing to decide.' } };

  const view = AppViewResultSchema.safeParse(structured);
  if (view.success) return { kind: 'request', result: view.data };
  if (AppDecideResultSchema.safeParse(structured).success) return { kind: 'said', said: { tone: 'answer', text: 'The decision was recorded.' } };
  const confirm = ElicitConfirmOutputSchema.safeParse(structured);
  if (confirm.success && confirm.data.action !== 'pending') return { kind: 'said', said: confirmSaid(confirm.data, input) };
  const form = ElicitFormOutputSchema.safeParse(structured);
  if (form.success && form.data.action !== 'pending') return { kind: 'said', said: formSaid(form.data, input) };
  const selection = ElicitSelectionOutputSchema.safeParse(structured);
  if (selection.success && selection.data.action !== 'pending') return { kind: 'said', said: selectionSaid(selection.data, input) };

  return { kind: 'said', said: { tone: 'answer', text: 'The tool answered. There is nothing to decide here.', returned: returnedText(result, structured) } };
}
