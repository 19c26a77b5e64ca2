/**
 * Structured log lines (one JSON object per line on stderr, which systemd's journal keeps). Passed in to every
 * long-lived part so tests can capture or silence it.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: Level, event: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(write: (line: string) => void = (l) => process.stderr.write(l), minLevel: Level = 'info'): Logger {
  const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  return {
    log(level, event, fields) {
      if (rank[level] < rank[minLevel]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };
