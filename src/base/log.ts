import { STDERR_GIVE_UP_MS, writeAllSync } from './fd-write.ts';

/**
 * Structured log lines (one JSON object per line on stderr, which systemd's journal keeps). Passed in to every
 * long-lived part so tests can capture or silence it.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: Level, event: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(write: (line: string) => void = writeStderr, minLevel: Level = 'info'): Logger {
  const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  return {
    log(level, event, fields) {
      if (rank[level] < rank[minLevel]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };

/**
 * A log line written to fd 2 before the call returns: a line that says a file was applied is out before the next
 * file starts, and a process killed at any moment loses no line it logged (process.stderr.write may hold it in
 * a buffer). A daemon must not hang on its log: after 10 s of a full pipe (or a failed write) the rest goes to
 * process.stderr, which queues it.
 */
export function writeStderr(line: string): void {
  const bytes = Buffer.from(line);
  const { at } = writeAllSync(2, bytes, STDERR_GIVE_UP_MS);
  if (at < bytes.length) process.stderr.write(bytes.subarray(at));
}
