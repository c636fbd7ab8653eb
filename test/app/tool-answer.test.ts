import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '../../app/app-client.js';
import { targetOf, type Said } from '../../app/tool-answer.js';
import { dateTime } from '../../kit/ui/format-time.js';
import { ID, TOKEN, northmarkView, structured } from './app-helpers.js';

const confirmInput = { question: 'Delete the staging cluster?', yesLabel: 'Delete', noLabel: 'Keep' };
const formInput = {
  message: 'Which release?',
  requestedSchema: {
    type: 'object',
    properties: {
      version: { type: 'string', title: 'Version' },
      channel: { type: 'string', title: 'Channel', oneOf: [{ const: 'stable', title: 'Stable' }, { const: 'beta', title: 'Beta testers' }] },
      notify: { type: 'boolean' },
      tags: { type: 'array', title: 'Tags', items: { type: 'string', enum: ['a', 'b'] } },
    },
  },
};
const selectionInput = { message: 'Which regions?', multiple: true, options: [{ value: 'eu', label: 'Europe' }, { value: 'us' }, { value: 'ap', label: 'Asia-Pacific' }] };
const PAIR = 'Ask the person to install the Elicitly browser extension; then ask again.';
const at = Date.UTC(2026, 10, 30, 12, 0);

/** The text alone, as a host that drops `structuredContent` passes it. */
const textOnly = (value: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });

const said = (s: Said) => ({ kind: 'said', said: s });

describe('targetOf: what the view shows for a tool result, never its JSON', () => {
  it.each<[string, CallToolResult, unknown, unknown]>([
    // elicit_confirm answered in the host's own dialog, with the agent's labels from the tool input.
    ['confirm, yes, in the chat', structured({ confirmed: true, action: 'accept', via: 'host' }), confirmInput,
      said({ tone: 'answer', asked: 'Delete the staging cluster?', text: 'Answered in the chat: Delete.' })],
    ['confirm, no, in the chat', structured({ confirmed: false, action: 'accept', via: 'host' }), confirmInput,
      said({ tone: 'answer', asked: 'Delete the staging cluster?', text: 'Answered in the chat: Keep.' })],
    ['confirm in the public shape', structured({ confirmed: true, action: 'accept', via: 'host' }), { message: 'Merge?', labels: { ok: 'Merge', cancel: 'Wait' } },
      said({ tone: 'answer', asked: 'Merge?', text: 'Answered in the chat: Merge.' })],
    ['confirm without the input: the default words', structured({ confirmed: false, action: 'accept', via: 'host' }), undefined,
      said({ tone: 'answer', text: 'Answered in the chat: No.' })],
    ['confirm with an input its schema refuses: the default words', structured({ confirmed: true, action: 'accept', via: 'host' }), { question: 'q', yesLabel: 'y'.repeat(41) },
      said({ tone: 'answer', text: 'Answered in the chat: Yes.' })],
    ['confirm declined', structured({ confirmed: false, action: 'decline', via: 'host' }), confirmInput,
      said({ tone: 'answer', asked: 'Delete the staging cluster?', text: 'Declined in the chat.' })],
    ['confirm dismissed (the question from the result)', structured({ confirmed: null, action: 'cancel', question: 'Ship it?', via: 'host' }), undefined,
      said({ tone: 'answer', asked: 'Ship it?', text: 'Dismissed in the chat without an answer.' })],
    ['confirm expired in the extension', structured({ confirmed: null, action: 'cancel', question: 'Ship it?', via: 'extension' }), undefined,
      said({ tone: 'answer', asked: 'Ship it?', text: 'Not answered: the question expired or was withdrawn before anyone answered it.' })],
    ['confirm answered in the extension', structured({ confirmed: true, action: 'accept', via: 'extension' }), confirmInput,
      said({ tone: 'answer', asked: 'Delete the staging cluster?', text: 'Answered in the Elicitly browser extension: Delete.' })],
    ['confirm the dialog failed, with next', structured({ confirmed: null, question: 'Ship it?', error: 'nobody can answer this question here', next: PAIR }), undefined,
      said({ tone: 'error', asked: 'Ship it?', text: 'Not answered: nobody can answer this question here.', notes: [PAIR] })],
    ['confirm as text only (structuredContent dropped)', textOnly({ confirmed: true, action: 'accept', via: 'host' }), confirmInput,
      said({ tone: 'answer', asked: 'Delete the staging cluster?', text: 'Answered in the chat: Delete.' })],
    // elicit_form: each field's title (the option's title for an enum) and the value given, in the form's order.
    ['form answered', structured({ action: 'accept', content: { tags: ['a', 'b'], notify: true, channel: 'beta', version: '2.4.1' }, via: 'host' }), formInput,
      said({ tone: 'answer', asked: 'Which release?', text: 'Answered in the chat:', fields: [
        { name: 'Version', value: '2.4.1' }, { name: 'Channel', value: 'Beta testers' }, { name: 'notify', value: 'Yes' }, { name: 'Tags', value: 'a, b' },
      ] })],
    ['form answered, no input: the keys', structured({ action: 'accept', content: { version: '', n: 3 }, via: 'host' }), undefined,
      said({ tone: 'answer', text: 'Answered in the chat:', fields: [{ name: 'version', value: '(empty)' }, { name: 'n', value: '3' }] })],
    ['form answered with nothing', structured({ action: 'accept', content: {}, via: 'host' }), formInput,
      said({ tone: 'answer', asked: 'Which release?', text: 'Answered in the chat, with no values.' })],
    ['form declined', structured({ action: 'decline', content: null, via: 'host' }), formInput,
      said({ tone: 'answer', asked: 'Which release?', text: 'Declined in the chat.' })],
    ['form dismissed', structured({ action: 'cancel', content: null, via: 'host' }), formInput,
      said({ tone: 'answer', asked: 'Which release?', text: 'Dismissed in the chat without an answer.' })],
    ['form failed', structured({ action: 'error', content: null, error: 'the host did not answer within 300 s', via: 'host' }), formInput,
      said({ tone: 'error', asked: 'Which release?', text: 'Not answered: the host did not answer within 300 s.' })],
    // elicit_selection: the chosen options by label.
    ['selection chosen', structured({ action: 'accept', selected: ['ap', 'us'], via: 'host' }), selectionInput,
      said({ tone: 'answer', asked: 'Which regions?', text: 'Chose in the chat: Asia-Pacific, us.' })],
    ['selection chosen, no input: the values', structured({ action: 'accept', selected: ['eu'], via: 'app' }), undefined,
      said({ tone: 'answer', text: 'Chose in the chat: eu.' })],
    ['selection of none', structured({ action: 'accept', selected: [], via: 'host' }), selectionInput,
      said({ tone: 'answer', asked: 'Which regions?', text: 'Answered in the chat, choosing none of the options.' })],
    ['selection declined', structured({ action: 'decline', selected: null, via: 'host' }), selectionInput,
      said({ tone: 'answer', asked: 'Which regions?', text: 'Declined in the chat.' })],
    ['selection expired in the extension', structured({ action: 'cancel', selected: null, via: 'extension' }), selectionInput,
      said({ tone: 'answer', asked: 'Which regions?', text: 'Not answered: the choice expired or was withdrawn before anyone answered it.' })],
    // elicit_app_decide rendered as the view.
    ['app decide recorded', structured({ ok: true, status: 'approved' }), undefined, said({ tone: 'answer', text: 'The decision was recorded.' })],
    ['app decide refused: already decided', structured({ error: { code: 'already_decided', field: 'elicitationId', message: 'already decided' }, decided: { via: 'extension', at } }, true), undefined,
      said({ tone: 'error', text: 'This request was already decided; your decision was not used.', notes: [`Decided in the browser extension at ${dateTime(at)}.`] })],
    ['app decide refused: invalid values', structured({ error: { code: 'invalid', field: 'values.name', message: 'values.name: too short' }, issues: [{ path: 'values.name', rule: 'minLength', message: 'values.name: too short' }] }, true), undefined,
      said({ tone: 'error', text: 'The hub refused these values; see the issues below.', notes: ['values.name: too short'] })],
    ['app decide refusal (its own)', structured({ error: { code: 'token_spent', field: 'token', message: 'token: already used' } }, true), { elicitationId: ID, token: TOKEN },
      said({ tone: 'error', text: 'This review\'s key was already used by a decision made here. (token_spent: token: already used)' })],
    ['app view refusal', structured({ error: { code: 'not_in_app', field: 'elicitationId', message: 'el_x was not created for review in this chat' } }, true), { elicitationId: ID },
      said({ tone: 'error', text: 'Decide this in the Elicitly browser extension: it was not made for review in this chat. (el_x was not created for review in this chat)' })],
    // Refusals and failures.
    ['a tool refusal', structured({ error: 'invalid_arguments', message: 'question: is required', hint: 'Fix the named field and call again.' }, true), {},
      said({ tone: 'error', text: 'The tool refused the call: question: is required.', notes: ['Fix the named field and call again.'] })],
    ['the SDK\'s own words', { isError: true, content: [{ type: 'text', text: 'Tool elicit_x not found' }] }, undefined, said({ tone: 'error', text: 'Tool elicit_x not found' })],
    ['an error of a shape the view does not know', structured({ oops: 1 }, true), undefined,
      said({ tone: 'error', text: 'The tool call failed.', returned: '{\n  "oops": 1\n}' })],
    // Anything else: a neutral sentence, and what came back behind a disclosure.
    ['an unknown shape', structured({ status: 'consumed', decision: 'approved' }), undefined,
      said({ tone: 'answer', text: 'The tool answered. There is nothing to decide here.', returned: '{\n  "status": "consumed",\n  "decision": "approved"\n}' })],
    ['plain text', { content: [{ type: 'text', text: 'The person answered: <b>yes</b>' }] }, undefined,
      said({ tone: 'answer', text: 'The tool answered. There is nothing to decide here.', returned: 'The person answered: <b>yes</b>' })],
    ['nothing at all', { content: [] }, undefined, said({ tone: 'answer', text: 'Answered. There is nothing to decide.' })],
  ])('%s', (_name, result, input, expected) => {
    expect(targetOf(result, input)).toEqual(expected);
  });

  it('a result that names a request: the review, with its key from _meta or read-only without it', () => {
    expect(targetOf({ content: [], structuredContent: { elicitationId: ID }, _meta: { 'io.github.elicitly/app': { elicitationId: ID, token: TOKEN } } })).toEqual({ kind: 'review', elicitationId: ID, token: TOKEN });
    expect(targetOf(structured({ confirmed: null, action: 'pending', elicitationId: ID, via: 'extension' }), confirmInput)).toEqual({ kind: 'review', elicitationId: ID, token: null });
  });

  it('elicit_app_view\'s result: the request it read, to show read-only', () => {
    const view = northmarkView();
    expect(targetOf(structured({ view, decided: null }), { elicitationId: ID })).toEqual({ kind: 'request', result: { view, decided: null } });
  });
});
