import { spawn } from 'node:child_process';

/**
 * Starts `elicitly-companion hub` on its own, outliving this hook: the same node and script, detached, no stdio, not
 * waited for. The environment (state dir, port) is this process's, so it is the hub this hook would have reached.
 */
export function spawnDetachedHub(execPath: string, script: string, port: number, env: NodeJS.ProcessEnv): void {
  const child = spawn(execPath, [script, 'hub', '--port', String(port)], { detached: true, stdio: 'ignore', env });
  child.on('error', () => undefined);
  child.unref();
}
