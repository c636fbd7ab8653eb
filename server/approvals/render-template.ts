import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as z from 'zod';
import { log } from '../log.js';
import { RenderResultSchema, TEMPLATE_LIMITS, refused, type RenderResult } from './template-limits.js';

export { TEMPLATE_LIMITS, type RenderResult, type TemplateRefusalCode } from './template-limits.js';

/** How long a fresh worker may take to load LiquidJS before the render is refused (not counted against `renderMs`). */
const START_MS = 10_000;
/** The worker's own heap: a template that allocates past LiquidJS's count ends that thread, never the server's. */
const WORKER_HEAP_MB = 128;

const ReplySchema = z.union([z.strictObject({ ready: z.literal(true) }), z.strictObject({ id: z.number().int(), result: RenderResultSchema })]);

/**
 * Where the worker's code is. Bundled, it is an entry of its own written among the chunks, beside this module's chunk
 * (scripts/build-server.mjs); the folder above is tried too, so that a bundle laid out otherwise still finds it. From
 * source (tests, tsx) it is the .ts file, loaded through tsx's loader since Node 20 cannot run TypeScript in a worker.
 */
function workerSource(): { code: string | URL; eval: boolean } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./render-worker.ts', here).href;
    return { code: `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, eval: true };
  }
  const beside = new URL('./render-worker.js', here);
  return { code: existsSync(fileURLToPath(beside)) ? beside : new URL('../render-worker.js', here), eval: false };
}

interface WorkerEntry {
  thread: Worker;
  /** True once the worker has loaded LiquidJS and said so; false if it exited or took longer than START_MS. */
  ready: Promise<boolean>;
  failure?: Error;
}

interface Job {
  template: string;
  context: unknown;
  resolve: (result: RenderResult) => void;
}

/**
 * One worker thread, one render at a time, a bounded queue, and a hard deadline on every render: at `killMs` the
 * worker is terminated (the next render starts a fresh one), so no template holds the server's event loop.
 */
class TemplateRenderer {
  private worker: WorkerEntry | undefined;
  private readonly queue: Job[] = [];
  private running = false;
  private nextId = 0;

  render(template: string, context: unknown): Promise<RenderResult> {
    if (this.queue.length >= TEMPLATE_LIMITS.queued) {
      return Promise.resolve(refused('busy', `${TEMPLATE_LIMITS.queued} templates are already waiting to render; call again in a moment`));
    }
    return new Promise((resolve) => {
      this.queue.push({ template, context, resolve });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) job.resolve(await this.run(job));
    } finally {
      this.running = false;
    }
  }

  private start(): WorkerEntry {
    if (this.worker) return this.worker;
    const source = workerSource();
    const thread = new Worker(source.code, { eval: source.eval, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB }, stdout: true });
    const entry: WorkerEntry = { thread, ready: Promise.resolve(false) };
    // stdout: true keeps the worker's stdout off the process's, which carries JSON-RPC. Without an 'error' listener an out-of-memory worker would throw on this thread.
    thread.on('error', (error) => (entry.failure = error));
    thread.on('exit', () => {
      if (this.worker === entry) this.worker = undefined;
    });
    entry.ready = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), START_MS);
      const settle = (ok: boolean) => {
        clearTimeout(timer);
        thread.off('message', onMessage);
        thread.off('exit', onExit);
        resolve(ok);
      };
      const onMessage = (raw: unknown) => {
        const reply = ReplySchema.safeParse(raw);
        if (reply.success && 'ready' in reply.data) settle(true);
      };
      const onExit = () => settle(false);
      thread.on('message', onMessage);
      thread.on('exit', onExit);
    });
    this.worker = entry;
    return entry;
  }

  private discard(entry: WorkerEntry): void {
    if (this.worker === entry) this.worker = undefined;
    void entry.thread.terminate();
  }

  private async run(job: Job): Promise<RenderResult> {
    const entry = this.start();
    entry.thread.ref();
    if (!(await entry.ready)) {
      log('error', 'the template worker did not start', { error: String(entry.failure ?? 'no answer') });
      this.discard(entry);
      return refused('render_failed', 'it could not be rendered: the template renderer did not start');
    }
    const id = this.nextId++;
    return new Promise<RenderResult>((resolve) => {
      const finish = (result: RenderResult) => {
        clearTimeout(timer);
        entry.thread.off('message', onMessage);
        entry.thread.off('exit', onExit);
        // Idle, the worker must not keep the process alive.
        entry.thread.unref();
        resolve(result);
      };
      const timer = setTimeout(() => {
        this.discard(entry);
        finish(refused('too_slow', `it renders longer than ${TEMPLATE_LIMITS.renderMs} ms, the limit for a display template`));
      }, TEMPLATE_LIMITS.killMs);
      const onMessage = (raw: unknown) => {
        const reply = ReplySchema.safeParse(raw);
        if (reply.success && 'id' in reply.data && reply.data.id === id) finish(reply.data.result);
      };
      const onExit = () => {
        const failure = entry.failure;
        const outOfMemory = failure !== undefined && 'code' in failure && failure.code === 'ERR_WORKER_OUT_OF_MEMORY';
        finish(outOfMemory
          ? refused('too_much_memory', `it allocates more than ${TEMPLATE_LIMITS.memoryBytes} bytes, the limit for a display template`)
          : refused('render_failed', 'it failed while rendering'));
      };
      entry.thread.on('message', onMessage);
      entry.thread.on('exit', onExit);
      try {
        entry.thread.postMessage({ id, template: job.template, context: job.context });
      } catch {
        // A context that cannot be cloned never came from a JSON-RPC body.
        finish(refused('render_failed', 'its context could not be handed to the renderer'));
      }
    });
  }
}

const renderer = new TemplateRenderer();

/**
 * Renders a `displayTemplate` in the render worker, never on this thread; a refusal names its code (`too_slow`,
 * `filter_refused`, ...) and never echoes what the template produced.
 */
export function renderTemplate(template: string, context: unknown): Promise<RenderResult> {
  return renderer.render(template, context);
}
