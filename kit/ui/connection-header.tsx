import type { ComponentChildren } from 'preact';
import type { ConnectionState, PairingReason } from '../rows/rows.js';
import { RetryCountdown } from './retry-countdown.js';

/** What only a surface can say about its connection: how its person starts the hub, pairs, or updates. */
export interface ConnectionWords {
  /** "this extension", "this page": the side whose protocol the state names (`extensionProtocol`). */
  self: string;
  /** After "Reconnecting — ": what is missing and how to start it. */
  noHub(port: number | undefined): ComponentChildren;
  /** Pairing is needed: how to pair here, and why again when the hub said. */
  pair(reason: PairingReason | undefined, port: number): ComponentChildren;
  /** After "Untrusted hub": what answered and what was not sent to it. */
  untrusted(port: number): ComponentChildren;
  /** After the versions: which side to update. */
  update(hubNewer: boolean): ComponentChildren;
}

function describe(connection: ConnectionState, words: ConnectionWords, port: number | undefined) {
  const retry = connection.retryAt !== undefined && <RetryCountdown retryAt={connection.retryAt} />;
  switch (connection.state) {
    case 'connected':
      return <>Connected</>;
    case 'connecting':
      return <>Connecting to the hub…</>;
    case 'pairing':
      return <>Pairing with the hub…</>;
    case 'reconnecting':
      return <>Reconnecting — {words.noHub(port)}{retry}</>;
    case 'pairing_needed':
      return words.pair(connection.reason, connection.port);
    case 'untrusted_hub':
      return <>Untrusted hub{words.untrusted(connection.port)}{retry}</>;
    case 'version_mismatch': {
      // A hub that names no version only said it refuses ours, which is what hubs older than the close codes did.
      const hub = connection.hubProtocol === null ? 'an older protocol' : `protocol ${connection.hubProtocol}`;
      const own = connection.extensionProtocol;
      const hubNewer = connection.hubProtocol !== null && connection.hubProtocol > own;
      return <>Version mismatch: the hub speaks {hub}, {words.self} protocol {own}. {words.update(hubNewer)}{retry}</>;
    }
  }
}

/**
 * Every surface's header: its connection to the hub, in its own words. `connection` undefined: not read yet; null:
 * nothing written yet (both "Starting…"). `port`: the hub's port as the surface knows it, for the words that name it.
 */
export function ConnectionHeader({ connection, words, port }: { connection: ConnectionState | null | undefined; words: ConnectionWords; port?: number }) {
  return (
    <div class="connection" role="status" data-state={connection?.state ?? 'starting'}>
      {connection ? describe(connection, words, port) : 'Starting…'}
      {connection?.detail && connection.state !== 'connected' && <span class="detail"> ({connection.detail})</span>}
    </div>
  );
}
