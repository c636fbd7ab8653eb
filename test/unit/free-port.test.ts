import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/scripted-extension.js';

describe("freePort: a test's hub port", () => {
  it('never hands one process the same port twice while its worker slice lasts, and stays in that slice', () => {
    // Hubs a file keeps open stay on their ports: a second draw of one of them put a new extension on the wrong hub.
    const ports = Array.from({ length: 2000 }, () => freePort());
    expect(new Set(ports).size).toBe(ports.length);
    const low = Math.min(...ports);
    expect(Math.max(...ports) - low).toBeLessThan(3000);
    expect(low).toBeGreaterThanOrEqual(20_000);
  });
});
