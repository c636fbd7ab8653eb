import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a mock model API received, as the test reads it back. */
export interface LoggedRequest {
  seq: number;
  method: string;
  path: string;
  body: unknown;
  /** 'main': it carried the conversation and got the scripted turn; 'side': a title or classifier request; 'other': no route. */
  kind: 'main' | 'side' | 'other';
}

export type Route = (request: { method: string; path: string; body: unknown }, res: ServerResponse) => LoggedRequest['kind'];

const MAX_BODY = 32 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy(new Error('request body too large for the mock'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parse(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Server-sent events: one `event:` line naming the data's `type`, one `data:` line. */
export function sendEvents(res: ServerResponse, events: readonly { type: string }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

/**
 * A loopback HTTP server on a port the kernel picks (never a fixed one, so parallel runs cannot collide), logging every
 * request it answers. It lives in the test's own process: closing it is all the cleanup there is.
 */
export class MockHttp {
  readonly requests: LoggedRequest[] = [];

  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(route: Route): Promise<MockHttp> {
    // The handler needs the instance, which needs the listening server's port.
    const self: { mock?: MockHttp } = {};
    const server = createServer((req, res) => {
      readBody(req).then(
        (raw) => {
          const method = req.method ?? 'GET';
          const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
          const body = parse(raw);
          const kind = route({ method, path, body }, res);
          self.mock?.log({ seq: (self.mock?.requests.length ?? 0) + 1, method, path, body, kind });
        },
        () => sendJson(res, 400, { error: 'unreadable body' }),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    self.mock = new MockHttp(server, (server.address() as AddressInfo).port);
    return self.mock;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private log(entry: LoggedRequest): void {
    this.requests.push(entry);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** What every mock model API gives a test besides its record of what the model was told: its address, the requests it received, its end. */
export abstract class MockModelApi {
  protected constructor(readonly http: MockHttp) {}

  get url(): string {
    return this.http.url;
  }

  get requests(): readonly LoggedRequest[] {
    return this.http.requests;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
