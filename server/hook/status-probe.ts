// What `hooks status` looks at beyond the settings files: each host's version as found on PATH, and whether a hook run
// now would reach a hub (a dry run of its first step: nothing is filed).
import { execFile } from 'node:child_process';
import type { RemoteHub } from '../config.js';
import { listening } from '../hub/status-command.js';
import type { StatusProbe } from './hooks-command.js';

/** A host that does not print its version within this is reported as not answering, never waited on. */
const VERSION_TIMEOUT_MS = 5000;

export function statusProbe(port: number, remoteHub: RemoteHub | undefined): StatusProbe {
  return {
    version: (host) =>
      new Promise((resolve) => {
        execFile(host.binary, ['--version'], { timeout: VERSION_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout) => {
          const line = stdout.trim().split('\n')[0]?.trim();
          resolve(error || !line ? null : line.slice(0, 120));
        });
      }),
    async hub() {
      if (remoteHub) return `${remoteHub.url} (ELICITLY_HUB_URL): a hook files its prompts there with the exported key`;
      return (await listening(port))
        ? `a hub answers on 127.0.0.1:${port}: a hook would reach it`
        : `no hub on 127.0.0.1:${port}: the first prompt starts one (the host asks in its terminal that once)`;
    },
  };
}
