import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import type { RequestView } from '../../shared/wire-protocol.js';
import { openDb, type ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView, type RequestRow } from '../../kit/rows/rows.js';
import { TEST_KEY, TEST_KEY_ID, pairHub as pairClient, proveHub as proveClient, type FakeSocket } from '../helpers/hub-fakes.js';

export { FakeSocket, ManualClock, TEST_CODE, TEST_KEY, TEST_KEY_ID, nextSent, proposalView, settle, until } from '../helpers/hub-fakes.js';

export function freshDb(): ElicitlyDb {
  return openDb({ indexedDB: new IDBFactory(), IDBKeyRange });
}

/** A pending json-mode approval (approve as-is) as the extension stores it, created at `createdAt`, live for an hour. */
export function jsonApprovalRow(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestRow {
  const message = overrides.message ?? `Approve ${id}`;
  return rowFromView({
    elicitationId: id,
    kind: 'approval',
    status: 'pending',
    message,
    createdAt,
    expiresAt: createdAt + 3_600_000,
    requester: { client: 'claude-code', pid: 4242 },
    request: { kind: 'approval', message, mode: 'json', context: { ok: true }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Reject' }, timeoutSeconds: 3600 },
    renderedTemplate: null,
    ...overrides,
  });
}

/** What the hub's proofs on this socket are bound to: the port the extension dialled, and its role. */
export function bindingOf(socket: FakeSocket): { port: number; role: 'extension' } {
  return { port: Number(new URL(socket.url).port), role: 'extension' };
}

/** The hub's side of the handshake with the extension: its proof of `secret` (or a forged one), then it checks ours. */
export function proveHub(socket: FakeSocket, secret: string, options: { forge?: boolean } = {}): Promise<{ hubNonce: string; peerNonce: string }> {
  return proveClient(socket, secret, bindingOf(socket), options);
}

export function pairHub(socket: FakeSocket, code: string, key = TEST_KEY, keyId = TEST_KEY_ID): Promise<void> {
  return pairClient(socket, code, bindingOf(socket), key, keyId);
}
