import { describe, expect, it } from 'vitest';
import { inDirectory, readRoutingPolicy, reviewerMayDecide, routeOf, type RouteSubject, type RoutingPolicy } from '../../shared/routing.js';

const POLICY: RoutingPolicy = {
  version: 1,
  routes: [
    { name: 'production deploys', match: { agents: ['Claude Code'], directories: ['/srv/prod'], kinds: ['permission'], tools: ['Bash'] }, groups: ['ops'], quorum: 2 },
    { name: 'any approval', match: { kinds: ['approval', 'proposal'] }, groups: ['leads'], quorum: 1 },
    { name: 'codex anywhere', match: { agents: ['codex'] }, groups: ['dev'], quorum: 1 },
  ],
};

const subject = (over: Partial<RouteSubject>): RouteSubject => ({ agent: null, directory: null, kind: 'confirm', tool: null, ...over });

describe('routeOf', () => {
  it.each<[string, Partial<RouteSubject>, string | null]>([
    ['every condition of the first route', { agent: 'claude code', directory: '/srv/prod/web', kind: 'permission', tool: 'Bash' }, 'production deploys'],
    ['its directory itself', { agent: 'Claude Code', directory: '/srv/prod', kind: 'permission', tool: 'Bash' }, 'production deploys'],
    ['a sibling directory with the same prefix is not inside', { agent: 'Claude Code', directory: '/srv/production', kind: 'permission', tool: 'Bash' }, null],
    ['another tool', { agent: 'Claude Code', directory: '/srv/prod', kind: 'permission', tool: 'Edit' }, null],
    ['no directory known', { agent: 'Claude Code', kind: 'permission', tool: 'Bash' }, null],
    ['the second route by kind', { kind: 'proposal' }, 'any approval'],
    ['an agent listed in another case', { agent: 'CODEX', kind: 'form' }, 'codex anywhere'],
    ['the first match wins', { agent: 'codex', kind: 'approval' }, 'any approval'],
    ['nothing matches: no route', { agent: 'cursor', kind: 'form' }, null],
  ])('%s', (_what, over, name) => {
    expect(routeOf(POLICY, subject(over))?.name ?? null).toBe(name);
  });

  it('no policy routes nothing, and a route keeps its groups and quorum', () => {
    expect(routeOf(null, subject({ kind: 'approval' }))).toBeNull();
    expect(routeOf(POLICY, subject({ agent: 'Claude Code', directory: '/srv/prod', kind: 'permission', tool: 'Bash' }))).toEqual({ name: 'production deploys', groups: ['ops'], quorum: 2 });
  });
});

describe('inDirectory and reviewerMayDecide', () => {
  it.each<[string, string, boolean]>([
    ['/a/b', '/a', true],
    ['/a', '/a', true],
    ['/ab', '/a', false],
    ['/anything', '/', true],
  ])('%s in %s: %s', (dir, root, inside) => {
    expect(inDirectory(dir, root)).toBe(inside);
  });

  it.each<[string, readonly string[] | null, boolean]>([
    ['a reviewer of one of the groups', ['dev', 'ops'], true],
    ['a reviewer of other groups', ['dev'], false],
    ['a reviewer of no group', [], false],
    ['a surface that is nobody\'s', null, false],
  ])('a routed request: %s', (_what, groups, may) => {
    expect(reviewerMayDecide({ name: 'r', groups: ['ops', 'sec'], quorum: 2 }, groups)).toBe(may);
  });

  it('a request with no route is everyone\'s', () => {
    expect(reviewerMayDecide(undefined, null)).toBe(true);
  });
});

describe('readRoutingPolicy', () => {
  it('no file is no policy; a good one is the policy', () => {
    expect(readRoutingPolicy(undefined)).toEqual({ ok: true, policy: null });
    expect(readRoutingPolicy(POLICY)).toEqual({ ok: true, policy: POLICY });
  });

  it.each<[string, unknown, RegExp]>([
    ['not JSON', null, /not JSON/],
    ['a quorum of 0', { ...POLICY, routes: [{ ...POLICY.routes[0], quorum: 0 }] }, /routes\[0\]\.quorum/],
    ['a quorum past the most', { ...POLICY, routes: [{ ...POLICY.routes[0], quorum: 11 }] }, /routes\[0\]\.quorum/],
    ['a relative directory', { ...POLICY, routes: [{ ...POLICY.routes[0], match: { directories: ['srv/prod'] } }] }, /routes\[0\]\.match\.directories\[0\]/],
    ['a group name in capitals', { ...POLICY, routes: [{ ...POLICY.routes[0], groups: ['Ops'] }] }, /routes\[0\]\.groups\[0\]/],
    ['no group', { ...POLICY, routes: [{ ...POLICY.routes[0], groups: [] }] }, /routes\[0\]\.groups/],
    ['an unknown key', { ...POLICY, routes: [{ ...POLICY.routes[0], reviewers: ['x'] }] }, /reviewers/],
    ['another version', { ...POLICY, version: 2 }, /version/],
  ])('refuses %s, naming the field', (_what, raw, field) => {
    const read = readRoutingPolicy(raw);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.problem).toMatch(field);
  });
});
