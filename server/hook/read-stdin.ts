import type { Readable } from 'node:stream';

export const STDIN_LIMITS = { bytes: 4 * 1024 * 1024, ms: 5000 } as const;

/**
 * The whole of stdin as text, bounded in size and time: a host that never closes the pipe, or sends a huge input, costs
 * the hook a fallback, never a hang past the host's own timeout.
 */
export function readStdin(stream: Readable, limits: { bytes: number; ms: number } = STDIN_LIMITS): Promise<{ ok: true; text: string } | { ok: false; why: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (answer: { ok: true; text: string } | { ok: false; why: string }) => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.removeAllListeners('end');
      stream.pause();
      resolve(answer);
    };
    const timer = setTimeout(() => finish({ ok: false, why: `stdin: not closed within ${limits.ms} ms` }), limits.ms);
    stream.on('data', (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > limits.bytes) return finish({ ok: false, why: `stdin: larger than ${limits.bytes} bytes` });
      chunks.push(buffer);
    });
    stream.once('end', () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    stream.once('error', (error: Error) => finish({ ok: false, why: `stdin: ${error.message}` }));
  });
}
