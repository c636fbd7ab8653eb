import { useEffect, useState } from 'preact/hooks';
import type { PasskeyInfo, PasskeyScope } from '../../shared/passkey-wire.js';
import type { ReviewerClient } from '../messages.js';
import { NOT_CONNECTED, addPasskey, passkeyInfo, removePasskey, setRequire } from './passkey-ceremony.js';

const NOT_READ = 'The passkeys could not be read from the hub yet.';

const SCOPES: { scope: PasskeyScope; label: string }[] = [
  { scope: 'permission', label: "Agents' permission prompts" },
  { scope: 'proposal', label: 'Proposals' },
  { scope: 'everything', label: 'Everything' },
  { scope: 'rules', label: 'Saving a rule' },
];

/**
 * The host permission an RP ID that is a host name needs in this browser (Firefox: `elicitly.localhost`); the Chrome
 * extension's own RP ID (its origin) needs none.
 */
function hostPermission(client: ReviewerClient, rpId: string | null): Promise<boolean> {
  if (rpId === null || rpId.includes('://') || !client.grantOrigins) return Promise.resolve(true);
  return client.grantOrigins([`http://${rpId}/*`]).catch(() => false);
}

/**
 * The person's passkeys (Settings): add one, remove one, and choose which requests need one. The list and the setting
 * are the hub's, read again after every change, so what is shown is what the hub enforces.
 */
/**
 * `connected`: whether the hub is connected now (undefined: not known yet). The list is read again whenever it
 * connects: the list and the setting are the hub's, and Settings is often open while pairing.
 */
export function PasskeysForm({ client, connected }: { client: ReviewerClient; connected: boolean | undefined }) {
  const [info, setInfo] = useState<PasskeyInfo | null>(null);
  const [required, setRequired] = useState<PasskeyScope[]>([]);
  const [label, setLabel] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const passkey = client.passkey;

  const load = async () => {
    if (!passkey) return;
    const read = await passkeyInfo({ passkey });
    if (read.ok) {
      setInfo(read.value);
      setRequired(read.value.require);
      setStatus((now) => (now === NOT_READ ? '' : now));
    } else setStatus(read.message === NOT_CONNECTED ? NOT_READ : read.message);
  };
  useEffect(() => {
    if (connected) void load();
  }, [connected]);
  if (!passkey) return null;

  const run = async (what: () => Promise<{ ok: true } | { ok: false; message: string }>, done: string) => {
    setBusy(true);
    setStatus('');
    try {
      const result = await what();
      setStatus(result.ok ? done : result.message);
      if (result.ok) setLabel('');
      await load();
    } finally {
      setBusy(false);
    }
  };

  if (info === null) {
    const waiting = connected === false ? 'Passkeys are kept by the hub: they show here once it is connected.' : 'Loading…';
    return <section class="settings" aria-label="Passkeys"><h2>Passkeys</h2><p class="muted" role="status">{status || waiting}</p></section>;
  }
  const name = label.trim();
  const toggle = (scope: PasskeyScope, on: boolean) => setRequired((now) => (on ? [...now, scope] : now.filter((s) => s !== scope)));
  return (
    <section class="settings" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      <p class="muted">
        A request that needs a passkey is decided only with one: your authenticator signs exactly the values sent, and the agent's receipt carries that signature.
      </p>
      {info.rpId === null && <p class="error">{info.why}</p>}
      {info.passkeys.length === 0 ? (
        <p class="muted">No passkey yet.</p>
      ) : (
        <ul aria-label="Your passkeys" class="passkeys">
          {info.passkeys.map((p) => (
            <li key={p.id}>
              <span>{p.label}</span> <span class="muted">added {new Date(p.createdAt).toLocaleDateString()}, key {p.fingerprint.slice(0, 16)}</span>{' '}
              <button type="button" disabled={busy} aria-label={`Remove the passkey ${p.label}`} onClick={() => void run(() => removePasskey({ passkey }, info, p.id), `Removed ${p.label}.`)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="field">
        <label for="passkey-label">Name for a new passkey</label>
        <input id="passkey-label" value={label} maxLength={60} placeholder="e.g. This laptop" onInput={(e) => setLabel(e.currentTarget.value)} />
      </div>
      <div class="actions">
        <button type="button" disabled={busy || name === '' || info.rpId === null} onClick={() => {
          // Asked here, in the click itself: Firefox grants a permission only from a user's input, not after an await.
          const granted = hostPermission(client, info.rpId);
          void run(async () => ((await granted) ? addPasskey({ passkey }, info, name) : { ok: false, message: `Passkeys here need the permission for ${info.rpId ?? ''}: nothing was added.` }), `Added ${name}.`);
        }}>
          Add a passkey
        </button>
      </div>
      <fieldset disabled={busy || info.passkeys.length === 0}>
        <legend>Require a passkey for</legend>
        {SCOPES.map(({ scope, label: text }) => (
          <div class="field checkbox" key={scope}>
            <input id={`passkey-require-${scope}`} type="checkbox" checked={required.includes(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} />
            <label for={`passkey-require-${scope}`}>{text}</label>
          </div>
        ))}
        <div class="actions">
          <button type="button" onClick={() => void run(() => setRequire({ passkey }, info, required), 'Saved.')}>Save what needs a passkey</button>
        </div>
      </fieldset>
      <p role="status" class="saved">{status}</p>
    </section>
  );
}
