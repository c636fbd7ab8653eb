import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import type { PermissionRequest } from '../../shared/permission.js';
import { HOUR_MS, defaultRuleEnd } from '../../shared/rule-draft.js';
import { DEFAULT_RULE_DAYS, RuleDraftSchema, describeRule, globPieces, type RuleDraft, type RuleMatch } from '../../shared/rules.js';
import { dateTime } from '../../kit/ui/format-time.js';
import { SCOPE_LABEL, withScope, type RuleScope } from '../../kit/ui/rule-words.js';
import { VisibleText } from '../../kit/ui/visible-text.js';

/** When the rule ends: as it was (an existing rule), after the default days, in an hour, or when it is removed. */
type Ends = 'keep' | 'days' | 'hour' | 'never';

/** What a new rule's end reads as: the review's scopes and a suggestion set an end, the radios say which. */
function endsOf(expiresAt: number | null, now: number): Ends {
  if (expiresAt === null) return 'never';
  return expiresAt - now <= HOUR_MS ? 'hour' : 'days';
}

const endsOfScope = (scope: RuleScope): Ends => (scope === 'hour' ? 'hour' : scope === 'forever' ? 'never' : 'days');

/**
 * The pattern as it will match, its wildcards marked: a `*` or `?` that came from the agent's text was escaped when the
 * rule was drafted, so only what the person typed (or left unescaped) shows as a wildcard.
 */
function PatternPreview({ id, pattern }: { id: string; pattern: string }) {
  const pieces = globPieces(pattern);
  const wildcards = pieces.some((p) => p.wildcard);
  return (
    <p id={id} class="pattern-preview">
      <span class="muted">{wildcards ? 'Matches: ' : 'Matches exactly: '}</span>
      <span class="mono">
        {pieces.map((piece, i) => (piece.wildcard
          ? <mark key={i} class="wildcard" title={piece.text === '*' ? 'any text' : 'one character'}>{piece.text}</mark>
          : <VisibleText key={i} text={piece.text} />))}
      </span>
    </p>
  );
}

interface Fields {
  tool: string;
  commandPrefix: string;
  pattern: string;
  agent: string;
  directory: string;
  /** The session the rule is limited to, when there is one to limit it to; `sessionOnly` says whether it is. */
  sessionOnly: boolean;
  expiresAt: number | null;
}

function fieldsOf(draft: RuleDraft): Fields {
  const m = draft.match;
  return {
    tool: m.tool,
    commandPrefix: m.commandPrefix ?? '',
    pattern: m.pattern ?? '',
    agent: m.agent ?? '',
    directory: m.directory ?? '',
    sessionOnly: m.sessionId !== undefined,
    expiresAt: draft.expiresAt,
  };
}

/** The draft exactly as the fields show it: an empty field is no condition. */
function draftOf(effect: RuleDraft['effect'], f: Fields, sessionId: string | undefined): RuleDraft {
  const match: RuleMatch = { tool: f.tool };
  if (f.commandPrefix.trim() !== '') match.commandPrefix = f.commandPrefix;
  if (f.pattern !== '') match.pattern = f.pattern;
  if (f.agent !== '') match.agent = f.agent;
  if (f.directory !== '') match.directory = f.directory;
  if (f.sessionOnly && sessionId) match.sessionId = sessionId;
  return { effect, match, expiresAt: f.expiresAt };
}

function TextField({ label, hint, value, onInput, disabled, children, describedBy }: {
  label: string;
  hint?: string;
  value: string;
  onInput(v: string): void;
  disabled: boolean;
  /** Shown under the hint (the pattern's preview), and `describedBy` its id. */
  children?: ComponentChildren;
  describedBy?: string;
}) {
  const id = useId();
  const hintId = useId();
  const described = [hint ? hintId : undefined, describedBy].filter(Boolean).join(' ');
  return (
    <div class="rule-field">
      <label for={id}>{label}</label>
      <input id={id} type="text" value={value} disabled={disabled} aria-describedby={described || undefined} onInput={(e) => onInput(e.currentTarget.value)} />
      {hint && <span id={hintId} class="muted hint">{hint}</span>}
      {children}
    </div>
  );
}

/**
 * A rule before it is saved, every part editable and the whole said in words above the button, so what is saved is
 * what the person read. In a review (`scopeOf`) the four scopes preset where and how long; the fields stay editable.
 * The Rules view uses it without scopes, for a rule that exists (`existing`: its end can be kept) or one its history
 * suggests. `dryRun` shows, under the words, what the rule as it stands would have answered before it is saved.
 */
export function RuleEditor({ initial, scopeOf, initialScope, existing = false, saveLabel, busy, onSave, onCancel, dryRun }: {
  initial: RuleDraft;
  /** The request a review's rule comes from: what "this session" and "this project" mean. */
  scopeOf?: Pick<PermissionRequest, 'cwd' | 'sessionId'>;
  initialScope?: RuleScope;
  /** A rule the hub has: "Keep" leaves its end as it is. */
  existing?: boolean;
  saveLabel: string;
  busy: boolean;
  onSave(draft: RuleDraft): void;
  onCancel(): void;
  dryRun?: (draft: RuleDraft) => ComponentChildren;
}) {
  const sessionId = initial.match.sessionId ?? (scopeOf?.sessionId || undefined);
  const [fields, setFields] = useState<Fields>(() => fieldsOf(initial));
  const [scope, setScope] = useState<RuleScope | undefined>(initialScope);
  const [ends, setEnds] = useState<Ends>(() => (existing && initial.expiresAt !== null ? 'keep' : endsOf(initial.expiresAt, Date.now())));
  const describedBy = useId();
  const previewId = useId();
  const set = (patch: Partial<Fields>) => setFields((f) => ({ ...f, ...patch }));
  const draft = draftOf(initial.effect, fields, sessionId);
  const checked = RuleDraftSchema.safeParse(draft);
  const now = Date.now();

  const pickScope = (next: RuleScope) => {
    if (!scopeOf) return;
    setScope(next);
    const scoped = withScope(draft, scopeOf, next, Date.now());
    setEnds(endsOfScope(next));
    set({ directory: scoped.match.directory ?? '', sessionOnly: scoped.match.sessionId !== undefined, expiresAt: scoped.expiresAt });
  };
  // Each end is taken from the moment it is picked: the words say the date, and that date is what is saved.
  const pickEnds = (next: Ends) => {
    setEnds(next);
    const at = Date.now();
    set({ expiresAt: next === 'keep' ? initial.expiresAt : next === 'days' ? defaultRuleEnd(at) : next === 'hour' ? at + HOUR_MS : null });
  };
  const title = initial.effect === 'allow' ? 'Always allow' : 'Always deny';

  return (
    <form
      class="rule-editor"
      aria-label={`${title}: the rule`}
      onSubmit={(e) => {
        e.preventDefault();
        if (checked.success && !busy) onSave(checked.data);
      }}
    >
      {scopeOf && (
        <fieldset>
          <legend>For</legend>
          {(Object.keys(SCOPE_LABEL) as RuleScope[]).map((s) => (
            <label key={s} class="inline">
              <input type="radio" name="rule-scope" value={s} checked={scope === s} disabled={busy || (s === 'session' && !scopeOf.sessionId)} onChange={() => pickScope(s)} />
              {' '}{SCOPE_LABEL[s]}
            </label>
          ))}
        </fieldset>
      )}
      <fieldset>
        <legend>Applies to</legend>
        <TextField label="Tool" value={fields.tool} disabled={busy} onInput={(tool) => set({ tool })} />
        <TextField label="Command starts with" hint="its first words, word for word; a command that chains or pipes is allowed only when each part is" value={fields.commandPrefix} disabled={busy} onInput={(commandPrefix) => set({ commandPrefix })} />
        <TextField
          label="Matching"
          hint="the file path or the arguments: * any text, ? one character, \ makes the next one itself"
          value={fields.pattern}
          disabled={busy}
          onInput={(pattern) => set({ pattern })}
          describedBy={fields.pattern === '' ? undefined : previewId}
        >
          {fields.pattern !== '' && <PatternPreview id={previewId} pattern={fields.pattern} />}
        </TextField>
        <TextField label="Agent" value={fields.agent} disabled={busy} onInput={(agent) => set({ agent })} />
        <TextField label="Directory" hint="only under this directory; empty: anywhere" value={fields.directory} disabled={busy} onInput={(directory) => set({ directory })} />
        {sessionId && (
          <label class="inline">
            <input type="checkbox" checked={fields.sessionOnly} disabled={busy} onChange={(e) => set({ sessionOnly: e.currentTarget.checked })} />
            {' '}Only in session <VisibleText text={sessionId} />
          </label>
        )}
      </fieldset>
      <fieldset>
        <legend>Ends</legend>
        {existing && initial.expiresAt !== null && (
          <label class="inline">
            <input type="radio" name="rule-ends" checked={ends === 'keep'} disabled={busy} onChange={() => pickEnds('keep')} />
            {' '}{initial.expiresAt <= now ? 'Stays expired' : `Keep: ${dateTime(initial.expiresAt)}`}
          </label>
        )}
        <label class="inline">
          <input type="radio" name="rule-ends" checked={ends === 'days'} disabled={busy} onChange={() => pickEnds('days')} />
          {' '}In {DEFAULT_RULE_DAYS} days
        </label>
        <label class="inline">
          <input type="radio" name="rule-ends" checked={ends === 'hour'} disabled={busy} onChange={() => pickEnds('hour')} />
          {' '}In 1 hour
        </label>
        <label class="inline">
          <input type="radio" name="rule-ends" checked={ends === 'never'} disabled={busy} onChange={() => pickEnds('never')} />
          {' '}Until removed
        </label>
      </fieldset>
      <p id={describedBy} class="rule-words" aria-live="polite">
        {checked.success
          ? <>The rule: <strong><VisibleText text={describeRule(checked.data, now)} /></strong></>
          : <span class="error">This rule cannot be saved: {checked.error.issues.map((i) => `${i.path.join('.') || 'rule'} ${i.message}`).join('; ')}</span>}
      </p>
      {checked.success && dryRun?.(checked.data)}
      <div class="rule-actions">
        <button type="submit" class="primary" aria-describedby={describedBy} disabled={busy || !checked.success}>{saveLabel}</button>
        <button type="button" disabled={busy} onClick={onCancel}>Back</button>
      </div>
    </form>
  );
}
