import { useEffect, useState } from 'preact/hooks';
import type * as z from 'zod';
import type { ReviewerClient } from '../../kit/messages.js';
import type { ElicitlyDb } from '../db/database.js';
import { SettingsSchema, type Settings } from '../../kit/rows/settings-schema.js';
import { patchSettings, readSettings } from '../db/settings-repo.js';

/** What this form edits; the pairing code and the keys are the pairing form's and the background's. */
const EditableSchema = SettingsSchema.pick({ port: true, notifications: true, retentionDays: true });
type Editable = z.infer<typeof EditableSchema>;
type Field = keyof Editable;
type Errors = Partial<Record<Field, string>>;

/** What the reviewer typed, kept as typed: a rejected save must not reset a field. */
interface Draft { port: string; notifications: boolean; retentionDays: string }

const LABELS: Record<Field, string> = {
  port: 'Hub port',
  notifications: 'Show a notification for each new request',
  retentionDays: 'Keep history for (days)',
};
const RANGES: Partial<Record<Field, [number, number]>> = { port: [1024, 65535], retentionDays: [1, 3650] };

function toDraft(settings: Settings): Draft {
  return {
    port: String(settings.port),
    notifications: settings.notifications,
    retentionDays: String(settings.retentionDays),
  };
}

/** An empty or unreadable number box is NaN, which the schema rejects like any other non-number. */
function toNumber(text: string): number {
  return text.trim() === '' ? Number.NaN : Number(text);
}

function explain(field: Field, code: string): string {
  const label = LABELS[field];
  const range = RANGES[field];
  if (range) {
    return code === 'too_small' || code === 'too_big'
      ? `${label} must be between ${range[0]} and ${range[1]}.`
      : `${label} must be a whole number between ${range[0]} and ${range[1]}.`;
  }
  return `${label} is not valid.`;
}

/** Only the fields the person changed: a field changed elsewhere meanwhile (another page, the background) stays. */
function changes(loaded: Editable, next: Editable): Partial<Editable> {
  const patch: Partial<Editable> = {};
  if (next.port !== loaded.port) patch.port = next.port;
  if (next.notifications !== loaded.notifications) patch.notifications = next.notifications;
  if (next.retentionDays !== loaded.retentionDays) patch.retentionDays = next.retentionDays;
  return patch;
}

function validate(draft: Draft): { ok: true; settings: Editable } | { ok: false; errors: Errors } {
  const parsed = EditableSchema.safeParse({
    port: toNumber(draft.port),
    notifications: draft.notifications,
    retentionDays: toNumber(draft.retentionDays),
  });
  if (parsed.success) return { ok: true, settings: parsed.data };
  const errors: Errors = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path[0];
    if (typeof field === 'string' && field in LABELS && !errors[field as Field]) errors[field as Field] = explain(field as Field, issue.code);
  }
  return { ok: false, errors };
}

export function SettingsForm({ db, client }: { db: ElicitlyDb; client: ReviewerClient }) {
  // Read once, not live: a live read would overwrite what the reviewer is typing.
  const [loaded, setLoaded] = useState<Editable | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [status, setStatus] = useState('');
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let active = true;
    void readSettings(db).then((settings) => {
      if (!active) return;
      setLoaded(settings);
      setDraft(toDraft(settings));
    });
    return () => {
      active = false;
    };
  }, [db]);

  if (draft === null || loaded === null) return <p class="muted">Loading…</p>;

  const change = (patch: Partial<Draft>) => {
    setDraft((current) => current && { ...current, ...patch });
    setStatus('');
  };

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const checked = validate(draft);
    if (!checked.ok) {
      setErrors(checked.errors);
      setStatus('');
      return;
    }
    setErrors({});
    setSaving(true);
    try {
      await patchSettings(db, changes(loaded, checked.settings));
      // What the form shows is the new baseline: a later save sends only what the person changed after this one.
      setLoaded(checked.settings);
    } catch {
      setSaving(false);
      setStatus('Not saved: the settings could not be stored.');
      return;
    }
    try {
      await client.reconnect();
      setStatus('Saved.');
    } catch {
      // The background re-reads the settings on its next attempt anyway.
      setStatus('Saved. The background did not answer; it will use the new settings on its next attempt.');
    } finally {
      setSaving(false);
    }
  };

  const fieldError = (field: Field) =>
    errors[field] && <p role="alert" id={`${field}-error`} class="error">{errors[field]}</p>;
  const described = (field: Field, hint?: string) => {
    const ids = [hint, errors[field] ? `${field}-error` : undefined].filter(Boolean).join(' ');
    return ids ? { 'aria-describedby': ids, 'aria-invalid': errors[field] ? true : undefined } : {};
  };

  return (
    <form class="settings" onSubmit={(e) => void onSubmit(e)} noValidate>
      <div class="field">
        <label for="settings-port">{LABELS.port}</label>
        <input
          id="settings-port"
          type="number"
          inputMode="numeric"
          value={draft.port}
          onInput={(e) => change({ port: e.currentTarget.value })}
          {...described('port')}
        />
        {fieldError('port')}
      </div>
      <div class="field checkbox">
        <input
          id="settings-notifications"
          type="checkbox"
          checked={draft.notifications}
          onChange={(e) => change({ notifications: e.currentTarget.checked })}
        />
        <label for="settings-notifications">{LABELS.notifications}</label>
        {fieldError('notifications')}
      </div>
      <div class="field">
        <label for="settings-retention">{LABELS.retentionDays}</label>
        <input
          id="settings-retention"
          type="number"
          inputMode="numeric"
          value={draft.retentionDays}
          onInput={(e) => change({ retentionDays: e.currentTarget.value })}
          {...described('retentionDays')}
        />
        {fieldError('retentionDays')}
      </div>
      <div class="actions">
        <button type="submit" disabled={saving}>Save</button>
        <span role="status" class="saved">{status}</span>
      </div>
    </form>
  );
}
