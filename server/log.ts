/** stdout carries the MCP protocol, so every diagnostic goes to stderr, one JSON line each. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function threshold(): number {
  const wanted = process.env.ELICITLY_LOG_LEVEL;
  return wanted !== undefined && wanted in ORDER ? ORDER[wanted as LogLevel] : ORDER.info;
}

export function log(level: LogLevel, message: string, details?: Record<string, unknown>): void {
  if (ORDER[level] < threshold()) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, pid: process.pid, message, ...details });
  process.stderr.write(`${line}\n`);
}
