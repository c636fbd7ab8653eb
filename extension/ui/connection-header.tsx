import type { ElicitlyDb } from '../db/database.js';
import type { ConnectionState, PairingReason } from '../db/rows.js';
import { readConnection, readSettings } from './page-reads.js';
import { useLiveQuery } from './use-live-query.js';
import { RetryCountdown } from './retry-countdown.js';

const PAIR = <code>npx elicitly-companion pair</code>;

/** Why this browser must pair (again), for the person to act on. */
function PairingReasonText({ reason, port }: { reason: PairingReason | undefined; port: number }) {
  switch (reason) {
    case undefined:
      return null;
    case 'code_refused':
      return <> The pairing code was refused: check it, or make a new one with {PAIR}.</>;
    case 'code_unproven':
      return (
        <>
          {' '}The hub on port {port} did not prove it knows that pairing code: check it, or make a new one with {PAIR}. If the
          code is right, something that is not this computer's Elicitly hub answers on the port.
        </>
      );
    case 'code_replaced':
      return <> A newer pairing code replaced that one: enter the newest.</>;
    case 'no_code_active':
      return <> No pairing code is active on the hub: run {PAIR} in a terminal and enter the new code.</>;
    case 'key_unknown':
      return <> The hub on port {port} no longer knows this browser's key (it was removed, or the hub's state was reset): pair again.</>;
  }
}

function describe(connection: ConnectionState, port: number | undefined) {
  switch (connection.state) {
    case 'connected':
      return <>Connected</>;
    case 'connecting':
      return <>Connecting to the hub…</>;
    case 'reconnecting':
      return (
        <>
          Reconnecting — no hub on port {port ?? '…'}. Start an agent that runs elicitly-companion.
          {connection.retryAt !== undefined && <RetryCountdown retryAt={connection.retryAt} />}
        </>
      );
    case 'pairing_needed':
      return (
        <>
          Pairing needed: enter the code from {PAIR} in{' '}
          <a href="#/settings">Settings → Pairing code</a>.
          <PairingReasonText reason={connection.reason} port={connection.port} />
        </>
      );
    case 'untrusted_hub':
      return (
        <>
          Untrusted hub on port {connection.port}: something that is not this computer's Elicitly hub answers on the port, so
          nothing was sent to it.
          {connection.retryAt !== undefined && <RetryCountdown retryAt={connection.retryAt} />}
        </>
      );
    case 'version_mismatch':
      return <VersionMismatch hubProtocol={connection.hubProtocol} extensionProtocol={connection.extensionProtocol} />;
  }
}

/**
 * Which side to update. A hub that names no version only said it refuses ours, which is what hubs older than the
 * protocol's version close codes did.
 */
function VersionMismatch({ hubProtocol, extensionProtocol }: { hubProtocol: number | null; extensionProtocol: number }) {
  const hub = hubProtocol === null ? 'an older protocol' : `protocol ${hubProtocol}`;
  const versions = `Version mismatch: the hub speaks ${hub}, this extension protocol ${extensionProtocol}.`;
  if (hubProtocol !== null && hubProtocol > extensionProtocol) return <>{versions} Update the Elicitly extension.</>;
  return (
    <>
      {versions} Update elicitly-companion (the MCP server: <code>npx -y elicitly-companion@latest</code>) and restart your agents.
    </>
  );
}

/** The background's connection to the hub, as it last wrote it. */
export function ConnectionHeader({ db }: { db: ElicitlyDb }) {
  // null once read and absent, so "nothing written yet" is told apart from "still loading".
  const connection = useLiveQuery(async () => (await readConnection(db)) ?? null, [db]);
  const settings = useLiveQuery(() => readSettings(db), [db]);
  const state = connection?.state ?? 'starting';
  return (
    <div class="connection" role="status" data-state={state}>
      {connection ? describe(connection, settings?.port) : 'Starting…'}
      {connection?.detail && connection.state !== 'connected' && <span class="detail"> ({connection.detail})</span>}
    </div>
  );
}
