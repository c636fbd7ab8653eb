// Issue 35, part 4: the phone page's link works only while a hub runs; `remote enable` makes sure one does, and a hub
// the page needs stays while the page is on.
import { describe, expect, it } from 'vitest';
import { runHubCommand, type HubElection } from '../../server/hook/hub-command.js';
import { ensurePageHub, pageHubText } from '../../server/remote/page-hub.js';

describe('ensurePageHub', () => {
  /** A port whose answers are scripted, one per look; the last one repeats. */
  function port(answers: ('hub' | 'other' | 'none')[]) {
    let looks = 0;
    let spawned = 0;
    return {
      deps: {
        probe: async () => answers[Math.min(looks++, answers.length - 1)] ?? 'none',
        spawn: () => void spawned++,
        pause: async () => undefined,
        attempts: 5,
      },
      spawned: () => spawned,
      looks: () => looks,
    };
  }

  it('a hub already answering: nothing is started', async () => {
    const p = port(['hub']);
    expect(await ensurePageHub(p.deps)).toBe('running');
    expect(p.spawned()).toBe(0);
  });

  it('none: one is started, and it is there once it proves itself (a moment of 503 while it opens is not "another program")', async () => {
    const p = port(['none', 'none', 'other', 'hub']);
    expect(await ensurePageHub(p.deps)).toBe('started');
    expect(p.spawned()).toBe(1);
  });

  it('another program on the port: nothing is started, and it is said so, after a bounded look', async () => {
    const p = port(['other']);
    expect(await ensurePageHub(p.deps)).toBe('other');
    expect(p.spawned()).toBe(0);
    expect(p.looks()).toBe(4);
    expect(pageHubText('other', 17391)).toContain('not this computer\'s hub answers on port 17391');
  });

  it('a hub that never comes up: it says so after a bounded number of looks, with what to run', async () => {
    const p = port(['none']);
    expect(await ensurePageHub(p.deps)).toBe('failed');
    expect(p.looks()).toBe(6);
    expect(pageHubText('failed', 17391)).toContain('Run `elicitly-companion hub`');
  });
});

describe('the hub command and the phone page', () => {
  /** An election that is the hub, with nothing pending and no agent connected. */
  function idleHub(): HubElection & { closed: boolean } {
    return {
      closed: false,
      role: () => 'hub',
      relaysConnected: () => 0,
      call: async () => ({ ok: true, value: { pid: 1, extensionsConnected: 0, lastSeenAt: null, pending: 0 } }),
      async close() {
        this.closed = true;
      },
    } as HubElection & { closed: boolean };
  }

  it('stays while the page is on, however long it is idle; once the page is off it stops after the idle time', async () => {
    let t = 0;
    let looks = 0;
    let pageOn = true;
    const election = idleHub();
    const end = await runHubCommand({
      election,
      idleMs: 1000,
      checkEveryMs: 1,
      stop: new Promise(() => undefined),
      now: () => t,
      needed: () => {
        looks++;
        t += 600;
        // Ten looks (6 s, six idle times) with the page on, then it is turned off.
        if (looks > 10) pageOn = false;
        return pageOn;
      },
    });
    expect(looks).toBeGreaterThan(10);
    expect(end.message).toContain('the phone page off');
    expect(election.closed).toBe(true);
  });
});
