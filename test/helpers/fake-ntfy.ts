import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the fake server received, with the moment it arrived (performance.now(), this process's clock). */
export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The bytes as they arrived (a push's body is ciphertext, not text). */
  raw: Buffer;
  at: number;
}

/**
 * A stand-in for an ntfy server and a webhook receiver on 127.0.0.1: records every request whole, answers 200. Tests
 * wait on what arrives with `next`, never on a sleep.
 */
export class FakeNtfy {
  readonly received: Received[] = [];
  private readonly arrivals = new EventEmitter();

  private constructor(private readonly server: Server) {}

  /** `status`: what each request is answered (200 unless it says otherwise: a push service's 410 for a gone subscription). */
  static async start(status: (path: string) => number = () => 200): Promise<FakeNtfy> {
    const server = createServer();
    const fake = new FakeNtfy(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const entry: Received = { path: req.url ?? '', headers: req.headers, body: raw.toString('utf8'), raw, at: performance.now() };
        fake.received.push(entry);
        res.writeHead(status(entry.path), { 'content-type': 'application/json' }).end('{}');
        fake.arrivals.emit('request', entry);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The first request (already received or still to come) that matches, within `timeoutMs`. */
  next(match: (r: Received) => boolean, timeoutMs: number): Promise<Received> {
    const found = this.received.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const listener = (r: Received) => {
        if (!match(r)) return;
        clearTimeout(timer);
        this.arrivals.off('request', listener);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.arrivals.off('request', listener);
        reject(new Error(`no matching notification within ${timeoutMs} ms; received: ${JSON.stringify(this.received.map((r) => [r.path, r.body]))}`));
      }, timeoutMs);
      this.arrivals.on('request', listener);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
