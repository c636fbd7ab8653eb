import { useMemo, useState } from 'preact/hooks';
import { ruleSuggestions, type QuestionRow, type RuleSuggestion } from '../../shared/rule-history.js';
import { describeRule, type Rule, type RuleDraft } from '../../shared/rules.js';
import type { ElicitlyDb } from '../db/database.js';
import { listRules } from '../db/rules-repo.js';
import type { ReviewerClient, RuleReply } from '../../kit/messages.js';
import { FeedbackView, type Feedback } from '../../kit/ui/review/decision-feedback.js';
import { dateTime } from '../../kit/ui/format-time.js';
import { DryRunView } from './rule-dry-run.js';
import { RuleEditor } from './rule-editor.js';
import { ruleExpiry, ruleUse } from '../../kit/ui/rule-words.js';
import { useLiveQuery } from './use-live-query.js';
import { useNow } from '../../kit/ui/use-now.js';
import { useQuestionHistory } from './use-question-history.js';
import { VisibleText } from '../../kit/ui/visible-text.js';
import '../../kit/ui/review/review.css';

/** At most this many suggestions at once: the strongest; the next shows when one is taken. */
const SUGGESTIONS_SHOWN = 5;

/** "You allowed npm test 37 times and denied it 0 times", with the subject as text (it is the agent's). */
function SuggestionWords({ suggestion }: { suggestion: RuleSuggestion }) {
  const allow = suggestion.draft.effect === 'allow';
  return (
    <p class="rule-words">
      You {allow ? 'allowed' : 'denied'} <code><VisibleText text={suggestion.subject} /></code> {allow ? suggestion.allowed : suggestion.denied} times
      {' '}and {allow ? 'denied' : 'allowed'} it 0 times
    </p>
  );
}

/** Where a suggestion applies, besides its subject: the tool, the agent, the directory. */
function suggestionScope(draft: RuleDraft): string {
  const m = draft.match;
  return [m.tool, m.agent && `from ${m.agent}`, m.directory && `in ${m.directory}`].filter(Boolean).join(' · ');
}

/** A rule change's answer in words; `done` is what happened when the hub took it. */
export function ruleReplyFeedback(reply: RuleReply, done: string): Feedback {
  switch (reply.state) {
    case 'answered':
      if (reply.ok) return { tone: 'status', text: done };
      return { tone: 'alert', text: `The hub refused this change${reply.issues?.length ? `: ${reply.issues.map((i) => i.message).join('; ')}` : '.'}` };
    case 'not_connected':
      return { tone: 'alert', text: 'The hub is not connected: rules can be changed only while it is. Nothing was changed.' };
    case 'no_answer':
      return { tone: 'alert', text: 'The hub did not answer in time; the list shows the rules it has.' };
    case 'error':
      return { tone: 'alert', text: reply.message };
  }
}

function draftOf(rule: Rule): RuleDraft {
  return { effect: rule.effect, match: rule.match, expiresAt: rule.expiresAt };
}

/**
 * The person's rules, as the hub last listed them: each in words with how long it lasts, and edit (the review's
 * editor), end now (it expires at once and stays listed) and delete. Changes go to the hub through the background; the
 * list changes when the hub sends its new list, so it never shows what the hub does not have.
 */
export function RulesView({ db, client }: { db: ElicitlyDb; client: ReviewerClient }) {
  const rules = useLiveQuery(() => listRules(db), [db]);
  const history = useQuestionHistory(db);
  const now = useNow();
  // One editor at a time: a rule's id, or `suggestion:` and a suggestion's key.
  const [editing, setEditing] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [feedback, setFeedback] = useState<Feedback | null>(null);
  const { saveRule, deleteRule } = client;

  const change = async (run: () => Promise<RuleReply>, done: string, after?: () => void) => {
    setBusy(true);
    setFeedback(null);
    let reply: RuleReply;
    try {
      reply = await run();
    } catch (error) {
      reply = { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
    setBusy(false);
    setFeedback(ruleReplyFeedback(reply, done));
    if (reply.state === 'answered' && reply.ok) after?.();
  };

  // Drawn again when the rules or the history change, not on every tick of the clock.
  const suggestions = useMemo(() => (rules && history ? ruleSuggestions(history, rules, Date.now()) : []), [rules, history]);
  const dryRun = (draft: RuleDraft) => <DryRunView rows={history} draft={draft} />;
  // A save the person's setting asks a passkey for (`rules`): the hub says so, and the save is made again with the
  // passkey's approval over exactly this id and draft. Without that setting it costs nothing more.
  const approvedSave = async (id: string | undefined, draft: RuleDraft): Promise<RuleReply> => {
    if (!saveRule) return { state: 'error', message: 'Rules can be changed only in the browser extension.' };
    const first = await saveRule(id, draft);
    const passkey = client.passkey;
    const asked = first.state === 'answered' && !first.ok && first.issues?.some((i) => i.path === 'proof' && i.rule === 'passkey_required');
    if (!asked || !passkey) return first;
    const approval = await (await import('../../kit/ui/passkey-ceremony.js')).approveRule({ passkey }, id, draft);
    if (!approval.ok) return { state: 'error', message: approval.message };
    return approval.value ? saveRule(id, draft, approval.value) : first;
  };

  if (rules === undefined) return <p class="muted">Loading…</p>;
  return (
    <section class="rules" aria-labelledby="rules-title">
      <h2 id="rules-title">Your rules</h2>
      <p class="muted">
        Rules answer an agent's permission prompt or yes/no question for you, the moment it is asked; every answer a rule
        gives is in the history. Only you make rules, in a review or here.
      </p>
      <FeedbackView feedback={feedback} />
      {!saveRule || !deleteRule ? <p class="muted">Rules can be changed only in the browser extension.</p> : null}
      {rules.length === 0 ? (
        <p class="muted">No rules yet. "Always allow…" or "Always deny…" in a permission review makes one.</p>
      ) : (
        <ul class="rule-list" aria-label="Rules">
          {rules.map((rule) => {
            const expired = rule.expiresAt !== null && rule.expiresAt <= now;
            return (
              <li key={rule.id} class={expired ? 'expired' : undefined}>
                <p class="rule-words"><span class={`rule-effect rule-${rule.effect}`}>{rule.effect === 'allow' ? 'Allow' : 'Deny'}</span> <VisibleText text={describeRule(rule, now)} /></p>
                <p class="muted">{ruleExpiry(rule, now, dateTime)} · made {dateTime(rule.createdAt)}</p>
                <p class="muted rule-use">{ruleUse(rule, now)}</p>
                {editing === rule.id && saveRule ? (
                  <RuleEditor
                    initial={draftOf(rule)}
                    existing
                    dryRun={dryRun}
                    saveLabel="Save the rule"
                    busy={busy}
                    onSave={(draft) => void change(() => approvedSave(rule.id, draft), 'Rule saved.', () => setEditing(null))}
                    onCancel={() => setEditing(null)}
                  />
                ) : saveRule && deleteRule ? (
                  <div class="rule-actions">
                    <button type="button" disabled={busy} onClick={() => setEditing(rule.id)} aria-label={`Edit: ${describeRule(rule, now)}`}>Edit</button>
                    {!expired && (
                      <button type="button" disabled={busy} aria-label={`End now: ${describeRule(rule, now)}`} onClick={() => void change(() => saveRule(rule.id, { ...draftOf(rule), expiresAt: Date.now() }), 'Rule ended.')}>End now</button>
                    )}
                    <button type="button" class="danger" disabled={busy} aria-label={`Delete: ${describeRule(rule, now)}`} onClick={() => void change(() => deleteRule(rule.id), 'Rule deleted.')}>Delete</button>
                  </div>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
      {saveRule && suggestions.length > 0 && (
        <Suggestions
          suggestions={suggestions.slice(0, SUGGESTIONS_SHOWN)}
          history={history}
          editing={editing}
          busy={busy}
          onEdit={setEditing}
          onSave={(draft) => void change(() => approvedSave(undefined, draft), 'Rule saved.', () => setEditing(null))}
        />
      )}
    </section>
  );
}

/**
 * Rules the person's own repeated answers suggest, each with one button that opens the editor with the rule in it:
 * nothing is saved until they press Save there.
 */
function Suggestions({ suggestions, history, editing, busy, onEdit, onSave }: {
  suggestions: RuleSuggestion[];
  history: QuestionRow[] | null | undefined;
  editing: string | null;
  busy: boolean;
  onEdit(key: string | null): void;
  onSave(draft: RuleDraft): void;
}) {
  return (
    <section class="rule-suggestions" aria-labelledby="suggestions-title">
      <h3 id="suggestions-title">Suggested by your answers</h3>
      <p class="muted">You gave the same answer to these again and again. A rule could give it for you.</p>
      <ul class="rule-list" aria-label="Suggested rules">
        {suggestions.map((suggestion) => {
          const key = `suggestion:${suggestion.key}`;
          const effect = suggestion.draft.effect === 'allow' ? 'Always allow' : 'Always deny';
          return (
            <li key={key}>
              <SuggestionWords suggestion={suggestion} />
              <p class="muted"><VisibleText text={suggestionScope(suggestion.draft)} /></p>
              {editing === key ? (
                <RuleEditor
                  initial={suggestion.draft}
                  dryRun={(draft) => <DryRunView rows={history} draft={draft} />}
                  saveLabel="Save the rule"
                  busy={busy}
                  onSave={onSave}
                  onCancel={() => onEdit(null)}
                />
              ) : (
                <div class="rule-actions">
                  <button type="button" disabled={busy} aria-label={`Make a rule: ${effect} ${suggestion.subject}`} onClick={() => onEdit(key)}>Make a rule…</button>
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
