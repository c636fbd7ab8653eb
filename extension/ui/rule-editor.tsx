import { useId, useState } from 'preact/hooks';
import type { PermissionRequest } from '../../shared/permission.js';
import { RuleDraftSchema, describeRule, type RuleDraft, type RuleMatch } from '../../shared/rules.js';
import { dateTime } from './format-time.js';
import { HOUR_MS, SCOPE_LABEL, withScope, type RuleScope } from './rule-words.js';
import { VisibleText } from './visible-text.js';

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

function TextField({ label, hint, value, onInput, disabled }: { label: string; hint?: string; value: string; onInput(v: string): void; disabled: boolean }) {
  const id = useId();
  const hintId = useId();
  return (
    <div class="rule-field">
      <label for={id}>{label}</label>
      <input id={id} type="text" value={value} disabled={disabled} aria-describedby={hint ? hintId : undefined} onInput={(e) => onInput(e.currentTarget.value)} />
      {hint && <span id={hintId} class="muted hint">{hint}</span>}
    </div>
  );
}

/**
 * A rule before it is saved, every part editable and the whole said in words above the button, so what is saved is
 * what the person read. In a review (`scopeOf`) the four scopes preset where and how long; the fields stay editable.
 * The Rules view uses it without scopes, for a rule that exists.
 */
export function RuleEditor({ initial, scopeOf, initialScope, saveLabel, busy, onSave, onCancel }: {
  initial: RuleDraft;
  /** The request a review's rule comes from: what "this session" and "this project" mean. */
  scopeOf?: Pick<PermissionRequest, 'cwd' | 'sessionId'>;
  initialScope?: RuleScope;
  saveLabel: string;
  busy: boolean;
  onSave(draft: RuleDraft): void;
  onCancel(): void;
}) {
  const sessionId = initial.match.sessionId ?? (scopeOf?.sessionId || undefined);
  const [fields, setFields] = useState<Fields>(() => fieldsOf(initial));
  const [scope, setScope] = useState<RuleScope | undefined>(initialScope);
  const describedBy = useId();
  const set = (patch: Partial<Fields>) => setFields((f) => ({ ...f, ...patch }));
  const draft = draftOf(initial.effect, fields, sessionId);
  const checked = RuleDraftSchema.safeParse(draft);
  const now = Date.now();

  const pickScope = (next: RuleScope) => {
    if (!scopeOf) return;
    setScope(next);
    const scoped = withScope(draft, scopeOf, next, Date.now());
    set({ directory: scoped.match.directory ?? '', sessionOnly: scoped.match.sessionId !== undefined, expiresAt: scoped.expiresAt });
  };
  const ends = fields.expiresAt === null ? 'never' : fields.expiresAt === initial.expiresAt ? 'keep' : 'hour';
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
        <TextField label="Command starts with" hint="its first words; an allow never covers a command that chains, pipes or redirects" value={fields.commandPrefix} disabled={busy} onInput={(commandPrefix) => set({ commandPrefix })} />
        <TextField label="Matching" hint="the file path or the arguments; * is any text" value={fields.pattern} disabled={busy} onInput={(pattern) => set({ pattern })} />
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
        {initial.expiresAt !== null && (
          <label class="inline">
            <input type="radio" name="rule-ends" checked={ends === 'keep'} disabled={busy} onChange={() => set({ expiresAt: initial.expiresAt })} />
            {' '}{initial.expiresAt <= now ? 'Stays expired' : `Keep: ${dateTime(initial.expiresAt)}`}
          </label>
        )}
        <label class="inline">
          <input type="radio" name="rule-ends" checked={ends === 'hour'} disabled={busy} onChange={() => set({ expiresAt: Date.now() + HOUR_MS })} />
          {' '}In 1 hour
        </label>
        <label class="inline">
          <input type="radio" name="rule-ends" checked={ends === 'never'} disabled={busy} onChange={() => set({ expiresAt: null })} />
          {' '}Until removed
        </label>
      </fieldset>
      <p id={describedBy} class="rule-words" aria-live="polite">
        {checked.success
          ? <>The rule: <strong><VisibleText text={describeRule(checked.data, now)} /></strong></>
          : <span class="error">This rule cannot be saved: {checked.error.issues.map((i) => `${i.path.join('.') || 'rule'} ${i.message}`).join('; ')}</span>}
      </p>
      <div class="rule-actions">
        <button type="submit" class="primary" aria-describedby={describedBy} disabled={busy || !checked.success}>{saveLabel}</button>
        <button type="button" disabled={busy} onClick={onCancel}>Back</button>
      </div>
    </form>
  );
}
