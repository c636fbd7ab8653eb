// Every registered host is whole: its facts agree with each other, and the parts of the bridge that are the same for
// every host (config, the installer's paths, the request) take them from the host alone.
import { describe, expect, it } from 'vitest';
import { HostIdSchema } from '../../shared/permission.js';
import { parseConfig } from '../../server/config.js';
import { settingsPath } from '../../server/hook/hooks-files.js';
import { permissionRequest } from '../../server/hook/hook-request.js';
import { HOOK_HOSTS, hookHost } from '../../server/hook/hosts/registry.js';

describe.each(HOOK_HOSTS.map((host) => [host.id, host] as const))('%s', (_id, host) => {
  it('its id is a host id, its events hold its defaults, companions and answered events', () => {
    expect(HostIdSchema.safeParse(host.id).success).toBe(true);
    expect(hookHost(host.id)).toBe(host);
    for (const event of [...host.defaultEvents, ...host.answeredEvents, ...host.withCompanions(host.defaultEvents)]) expect(host.events).toContain(event);
  });

  it('a stdin that is not an object, or an event it does not have, is a refusal naming why, never a throw', () => {
    for (const event of host.events) {
      const parsed = host.parse(event, [1, 2]);
      expect(parsed.ok).toBe(false);
    }
    expect(host.parse('NoSuchEvent', {}).ok).toBe(false);
  });

  it('config takes its id and events from it, and its settings folder from its variable or HOME', () => {
    const event = host.events[0]!;
    const hook = parseConfig(['hook', '--host', host.id, event], { HOME: '/h' });
    expect(hook.ok && hook.config.hook).toMatchObject({ host, event });
    const wrong = parseConfig(['hook', '--host', host.id, 'NoSuchEvent'], { HOME: '/h' });
    expect(wrong.ok).toBe(false);
    const fromHome = parseConfig(['hooks', 'status'], { HOME: '/h' });
    const fromVariable = parseConfig(['hooks', 'status'], { HOME: '/h', [host.configDir.env]: '/elsewhere' });
    if (!fromHome.ok || !fromVariable.ok) throw new Error('hooks status parses');
    expect(fromHome.config.hostDirs[host.id]).toBe(`/h/${host.configDir.home}`);
    const named = host.configDir.envHoldsHome ? `/elsewhere/${host.configDir.home}` : '/elsewhere';
    expect(settingsPath(host, 'user', { user: fromVariable.config.hostDirs, cwd: '/p' })).toBe(`${named}/${host.settingsFile.user}`);
    expect(settingsPath(host, 'project', { user: {}, cwd: '/p' })).toBe(['/p', ...host.settingsFile.project].join('/'));
  });

  it('the request a person reviews names it by its own name', () => {
    const tool = [...host.shellTools][0]!;
    const mapped = permissionRequest(host, host.events[0]!, { sessionId: 's', cwd: '/w', tool, input: { command: 'ls' } }, 60, () => null);
    expect(mapped.ok && mapped.request).toMatchObject({ host: host.id, hostName: host.name, message: `${host.name} wants to run a command`, command: 'ls' });
  });
});
