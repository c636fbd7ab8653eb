// One contract for the directory (server/directory.ts: pairing codes, paired browsers and phones, exported relay keys,
// reviewers, the push key), run against both of its stores: a state dir (one person's hub) and PostgreSQL in a
// throw-away cluster (a team's hubs; never a mock). Two handles on one place stand for two processes (two hubs, a hub
// and a command in a terminal): what one changes the other sees, and changes made at once through both all land.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { EXTENSIONS, PAIRING_MAX_FAILURES, ROUTING, type Directory } from '../../server/directory.js';
import { StateDir } from '../../server/state-dir.js';
import { PgDirectory } from '../../server/store/pg-directory.js';
import { postgresBin, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';

const required = process.env.ELICITLY_REQUIRE_POSTGRES === '1';
const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const PUSH = { endpoint: 'https://fcm.googleapis.com/fcm/send/abc', keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } };

/** Where a directory lives, and how to open one more handle on it (another process) and damage a document behind its back. */
interface Place {
  open(): Promise<Directory>;
  plantDamaged(name: string): Promise<void>;
  dispose(): Promise<void>;
}

let cluster: PgCluster | undefined;
let databases = 0;

const KINDS: { name: string; available: boolean; place(): Promise<Place> }[] = [
  {
    name: 'state dir',
    available: true,
    async place() {
      const dir = mkdtempSync(join(tmpdir(), 'elicitly-directory-'));
      return {
        open: async () => new StateDir(dir),
        plantDamaged: async (name) => writeFileSync(join(dir, name), '{"version":1,"extensions":[{"keyId":"nope"}]}', { mode: 0o600 }),
        dispose: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresBin() !== null || required,
    async place() {
      cluster ??= startPgCluster();
      const name = `directory_${++databases}`;
      const admin = postgres(cluster.url, { max: 1, onnotice: () => undefined });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      const url = cluster.url.replace(/\/elicitly$/, `/${name}`);
      const opened: PgDirectory[] = [];
      return {
        async open() {
          const directory = await PgDirectory.open({ url });
          opened.push(directory);
          return directory;
        },
        async plantDamaged(doc) {
          const db = postgres(url, { max: 1, onnotice: () => undefined });
          await db`insert into elicitly_directory (name, rev, body) values (${doc}, 1, '{"version":1,"extensions":[{"keyId":"nope"}]}') on conflict (name) do update set body = excluded.body, rev = elicitly_directory.rev + 1`;
          await db.end();
        },
        async dispose() {
          for (const directory of opened) await directory.close();
        },
      };
    },
  },
];

afterAll(() => cluster?.stop());

/** Polls `check` every 10 ms until it holds or 5 s pass: another handle hears a change within milliseconds. */
async function seen(check: () => boolean): Promise<boolean> {
  for (let waited = 0; waited < 5000; waited += 10) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return check();
}

describe.each(KINDS)('the directory in a $name', (kind) => {
  const each = (title: string, body: (place: Place) => Promise<void>) =>
    it.skipIf(!kind.available)(title, async () => {
      const place = await kind.place();
      try {
        await body(place);
      } finally {
        await place.dispose();
      }
    }, 60_000);

  each('a pairing code: made with a serial, spent once and by its own code only, burnt by ten wrong guesses', async (place) => {
    const dir = await place.open();
    const first = await dir.createPairing('extension', Date.now(), 'Ana');
    expect(dir.pairing('extension')).toEqual(first);
    expect(first).toMatchObject({ serial: 1, failures: 0, reviewer: 'Ana' });
    // Another code (one a newer `pair` replaced) spends nothing.
    expect(await dir.clearPairing('extension', '000000000000')).toBe(false);
    expect(dir.pairing('extension')).toEqual(first);
    const second = await dir.createPairing('extension');
    expect(second.serial).toBe(2);
    expect(await dir.clearPairing('extension', second.code)).toBe(true);
    expect(await dir.clearPairing('extension', second.code)).toBe(false);
    // Each purpose its own code.
    const device = await dir.createPairing('device');
    await dir.createPairing('extension');
    expect(dir.pairing('device')).toEqual(device);
    for (let left = PAIRING_MAX_FAILURES - 1; left >= 0; left--) expect(await dir.recordPairingFailure('device')).toBe(left);
    expect(dir.pairing('device')).toBeUndefined();
    expect(dir.pairing('extension')).toBeDefined();
  });

  each('keys: browsers, phones and relay keys are added, found and removed; a reviewer removed takes their browsers and phones along', async (place) => {
    const dir = await place.open();
    await dir.putReviewer('Ana Pérez', ['ops', 'ops', 'db']);
    expect((await dir.putReviewer('ana pérez', ['sec'])).added).toBe(false);
    expect(dir.reviewers()).toEqual([expect.objectContaining({ name: 'Ana Pérez', groups: ['sec'] })]);
    const ana = await dir.addPairedExtension(ORIGIN, 1, 'Ana Pérez');
    const mine = await dir.addPairedExtension('chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba', 2);
    const phone = await dir.addPairedDevice('Pixel', 'https://hub.example', 3, 'Ana Pérez');
    const relay = await dir.addRelayKey('ci', ['permission', 'permission']);
    expect(relay.allow).toEqual(['permission']);
    expect(dir.relayKeys().map((k) => k.keyId)).toEqual([relay.keyId]);
    expect(dir.reviewerOf(ana.keyId)).toBe('Ana Pérez');
    expect(dir.reviewerOf(phone.keyId)).toBe('Ana Pérez');
    expect(dir.reviewerOf(mine.keyId)).toBeUndefined();
    expect(await dir.setDevicePush(phone.keyId, PUSH)).toBe(true);
    expect(dir.pairedDevices()[0]?.push?.subscription).toEqual(PUSH);
    // Dropping only the subscription it was: a renewed one stays.
    expect(await dir.setDevicePush(phone.keyId, null, { onlyEndpoint: 'https://fcm.googleapis.com/fcm/send/other' })).toBe(false);
    expect(await dir.removeReviewer('ANA PÉREZ')).toEqual({ extensions: 1, devices: 1 });
    expect(await dir.removeReviewer('Ana Pérez')).toBeNull();
    expect(dir.pairedExtensions().map((e) => e.keyId)).toEqual([mine.keyId]);
    expect(dir.pairedDevices()).toEqual([]);
    expect(await dir.removeRelayKey(relay.keyId)).toBe(true);
    expect(await dir.removeRelayKey(relay.keyId)).toBe(false);
    expect(await dir.removePairedExtensions('chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba')).toBe(1);
    expect(dir.pairedExtensions()).toEqual([]);
  });

  each('two processes: what one changes the other sees (and is told of), and the push key is made once for both', async (place) => {
    const [a, b] = [await place.open(), await place.open()];
    const heard: (string | null)[] = [];
    const stop = b.watch((name) => heard.push(name));
    try {
      const key = await a.addPairedExtension(ORIGIN);
      expect(await seen(() => b.pairedExtensions().some((e) => e.keyId === key.keyId))).toBe(true);
      expect(await seen(() => heard.includes(EXTENSIONS.name))).toBe(true);
      const stamp = b.stamp(EXTENSIONS.name);
      await a.removePairedExtensions(ORIGIN);
      expect(await seen(() => b.pairedExtensions().length === 0)).toBe(true);
      expect(b.stamp(EXTENSIONS.name)).not.toBe(stamp);
      const [pushA, pushB] = await Promise.all([a.vapidKeys(), b.vapidKeys()]);
      expect(pushB).toEqual(pushA);
    } finally {
      stop?.();
    }
  });

  each('two processes changing one document at once lose nothing, and one code is spent by one of them only', async (place) => {
    const [a, b] = [await place.open(), await place.open()];
    const added = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).addPairedExtension(`${ORIGIN}${i}`)));
    await b.catchUp();
    expect(new Set(b.pairedExtensions().map((e) => e.keyId))).toEqual(new Set(added.map((e) => e.keyId)));
    for (let round = 0; round < 5; round++) {
      const { code } = await a.createPairing('extension');
      expect(await seen(() => b.pairing('extension')?.code === code)).toBe(true);
      const spent = await Promise.all([a.clearPairing('extension', code), b.clearPairing('extension', code)]);
      expect(spent.filter(Boolean)).toHaveLength(1);
    }
  });

  each('the routing policy: none at first, set whole and read by the other process; a damaged one is a problem, never "none"', async (place) => {
    const [a, b] = [await place.open(), await place.open()];
    expect(a.routing()).toEqual({ ok: true, policy: null });
    const reader = b.routingReader();
    const policy = { version: 1 as const, routes: [{ name: 'production', match: { directories: ['/srv/prod'] }, groups: ['ops'], quorum: 2 }] };
    await a.setRouting(policy);
    expect(a.routing()).toEqual({ ok: true, policy });
    expect(await seen(() => JSON.stringify(reader()) === JSON.stringify({ ok: true, policy }))).toBe(true);
    await place.plantDamaged(ROUTING);
    await b.catchUp();
    const damaged = b.routing();
    expect(damaged.ok).toBe(false);
    expect(await seen(() => reader().ok === false)).toBe(true);
  });

  each('a damaged document counts as none (every browser pairs again); the next change replaces it', async (place) => {
    // Opened once first, as a hub that ran before (a database is then migrated).
    await place.open();
    await place.plantDamaged(EXTENSIONS.name);
    const dir = await place.open();
    expect(dir.pairedExtensions()).toEqual([]);
    const key = await dir.addPairedExtension(ORIGIN);
    expect(dir.pairedExtensions().map((e) => e.keyId)).toEqual([key.keyId]);
  });
});
