import * as z from 'zod';

/** stdout carries the MCP protocol, so every diagnostic goes to stderr, one JSON line each. */
export const LogLevelSchema = z.enum(['debug', 'info', 'warn', 'error']);
type LogLevel = z.infer<typeof LogLevelSchema>;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold = ORDER.info;

/** Set once by the entry point from the parsed configuration. */
export function setLogLevel(level: LogLevel): void {
  threshold = ORDER[level];
}

export function log(level: LogLevel, message: string, details?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, pid: process.pid, message, ...details });
  process.stderr.write(`${line}\n`);
}
