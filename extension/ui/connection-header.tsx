import type { ElicitlyDb } from '../db/database.js';
import { ConnectionHeader as KitHeader, type ConnectionWords } from '../../kit/ui/connection-header.js';
import type { PairingReason } from '../../kit/rows/rows.js';
import { readConnection, readSettings } from './page-reads.js';
import { useLiveQuery } from './use-live-query.js';

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

const WORDS: ConnectionWords = {
  self: 'this extension',
  noHub: (port) => <>no hub on port {port ?? '…'}. Start an agent that runs elicitly-companion.</>,
  pair: (reason, port) => (
    <>
      Pairing needed: enter the code from {PAIR} in{' '}
      <a href="#/settings">Settings → Pairing code</a>.
      <PairingReasonText reason={reason} port={port} />
    </>
  ),
  untrusted: (port) => <> on port {port}: something that is not this computer's Elicitly hub answers on the port, so nothing was sent to it.</>,
  update: (hubNewer) =>
    hubNewer ? <>Update the Elicitly extension.</> : <>Update elicitly-companion (the MCP server: <code>npx -y elicitly-companion@latest</code>) and restart your agents.</>,
};

/** The background's connection to the hub, as it last wrote it. */
export function ConnectionHeader({ db }: { db: ElicitlyDb }) {
  // null once read and absent, so "nothing written yet" is told apart from "still loading".
  const connection = useLiveQuery(async () => (await readConnection(db)) ?? null, [db]);
  const settings = useLiveQuery(() => readSettings(db), [db]);
  return <KitHeader connection={connection} words={WORDS} {...(settings ? { port: settings.port } : {})} />;
}
