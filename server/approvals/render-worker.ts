// The render worker's entry: one LiquidJS engine on its own thread, one render at a time, so that a filter that
// overruns its time inside a single step blocks this thread only, and the server terminates it (render-template.ts).
import { parentPort } from 'node:worker_threads';
import * as z from 'zod';
import { renderInProcess } from './template-engine.js';

const RenderJobSchema = z.strictObject({ id: z.number().int(), template: z.string(), context: z.unknown() });

const port = parentPort;
if (port) {
  port.on('message', (raw: unknown) => {
    const job = RenderJobSchema.safeParse(raw);
    if (!job.success) return;
    const { id, template, context } = job.data;
    void renderInProcess(template, context).then((result) => port.postMessage({ id, result }));
  });
  port.postMessage({ ready: true });
}
