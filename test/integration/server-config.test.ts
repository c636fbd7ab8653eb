// Configuration as a host passes it: environment variables on a spawned server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the server reads its configuration once, and says what is wrong with it', () => {
  it('a value that does not parse stops the server with the variable and the rule named, nothing on stdout', () => {
    const run = spawnSync(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, ELICITLY_PORT: '70000', ELICITLY_RETENTION_DAYS: 'a week', ELICITLY_STATE_DIR: dir },
      input: '',
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('ELICITLY_PORT (or --port): Too big');
    expect(run.stderr).toContain('ELICITLY_RETENTION_DAYS: Invalid input: expected number, received NaN, got "a week"');
  });

  it('the not_found hint states the configured retention, not a fixed 7 days', async () => {
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()), ELICITLY_RETENTION_DAYS: '30' } });
    try {
      const result = await agent.callTool('elicit_status', { elicitationId: 'el_unknown' });
      expect(result.isError).toBe(true);
      const body = JSON.parse((result.content?.[0] as { text: string }).text) as { error: string; hint: string };
      expect(body).toMatchObject({ error: 'not_found', hint: expect.stringContaining('kept 30 days after they end') });
    } finally {
      await agent.close();
    }
  });
});
