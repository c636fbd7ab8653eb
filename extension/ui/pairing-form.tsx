import { useState } from 'preact/hooks';
import { PAIRING_CODE_PATTERN, PAIRING_TTL_MINUTES, normalizePairingCode } from '../../shared/hub-auth.js';
import type { ElicitlyDb } from '../db/database.js';
import { hubKeyFor, type Settings } from '../../kit/rows/settings-schema.js';
import { patchSettings, readSettings } from '../db/settings-repo.js';
import type { ReviewerClient } from '../../kit/messages.js';
import { useLiveQuery } from './use-live-query.js';


function pairingStatus(settings: Settings): string {
  const port = settings.port;
  if (settings.pairingCode) return `Pairing with the hub on port ${port}…`;
  if (hubKeyFor(settings, port)) return `This browser is paired with the hub on port ${port}.`;
  return `This browser is not paired with the hub on port ${port} yet.`;
}

/**
 * The one step of pairing: the person enters the code and presses Pair; the background then connects at once, proves
 * the code, receives this browser's key and forgets the code. What happens shows live (the header says why a code was
 * refused).
 */
export function PairingForm({ db, client }: { db: ElicitlyDb; client: ReviewerClient }) {
  const settings = useLiveQuery(() => readSettings(db), [db]);
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const normalized = normalizePairingCode(code);
    if (!PAIRING_CODE_PATTERN.test(normalized)) {
      setError('Pairing code must be the 12 letters and digits (0–9, a–f) that npx elicitly-companion pair printed.');
      return;
    }
    setError('');
    setBusy(true);
    try {
      await patchSettings(db, { pairingCode: normalized });
      setCode('');
      await client.reconnect();
    } catch {
      // Stored but the background did not answer: it reads the code on its next attempt anyway.
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="pairing" aria-label="Pairing" onSubmit={(e) => void onSubmit(e)} noValidate>
      <div class="field">
        <label for="pairing-code">Pairing code</label>
        <div class="inline">
          <input
            id="pairing-code"
            type="text"
            autoComplete="off"
            spellcheck={false}
            value={code}
            onInput={(e) => {
              setCode(e.currentTarget.value);
              setError('');
            }}
            aria-describedby={error ? 'pairing-hint pairing-error' : 'pairing-hint'}
            aria-invalid={error ? true : undefined}
          />
          <button type="submit" disabled={busy}>Pair</button>
        </div>
        <p id="pairing-hint" class="hint">
          Run <code>npx elicitly-companion pair</code> in a terminal on this computer and enter the code it prints before the time it names (a code is valid {PAIRING_TTL_MINUTES} minutes).
        </p>
        {error && <p role="alert" id="pairing-error" class="error">{error}</p>}
        <p role="status" class="pairing-status">{settings ? pairingStatus(settings) : ''}</p>
      </div>
    </form>
  );
}
