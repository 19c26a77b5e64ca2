import { fstatSync } from 'node:fs';
import { STDERR_GIVE_UP_MS, writeAllSync } from './fd-write.ts';

/**
 * Structured log lines (one JSON object per line on stderr, which systemd's journal keeps). Passed in to every
 * long-lived part so tests can capture or silence it.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: Level, event: string, fields?: Record<string, unknown>): void;
}

export interface LogFormat {
  /** each line starts with its level's sd-daemon priority (`<3>` error ... `<7>` debug): stderr is the journal */
  priorities?: boolean;
}

/** sd-daemon(3): the journal files a line that starts with one at that priority (`journalctl -p warning`). */
const PRIORITIES: Record<Level, string> = { error: '<3>', warn: '<4>', info: '<6>', debug: '<7>' };
const NO_PRIORITIES: Record<Level, string> = { error: '', warn: '', info: '', debug: '' };

export function jsonLogger(
  write: (line: string) => void = writeStderr,
  minLevel: Level = 'info',
  format: LogFormat = {},
): Logger {
  const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  const prefix = format.priorities ? PRIORITIES : NO_PRIORITIES;
  return {
    log(level, event, fields) {
      if (rank[level] < rank[minLevel]) return;
      write(`${prefix[level]}${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`);
    },
  };
}

/**
 * Whether stderr is the journal. systemd puts the device and inode of the stream it gives a service's output in
 * JOURNAL_STREAM (`<dev>:<ino>`); the variable is inherited by whatever the service starts, whose stderr may be a
 * terminal or a file, so it counts only when it names this process's stderr (systemd.exec(5) says to compare).
 * `journalStream` is the variable's value, handed down from the entry.
 */
export function stderrIsJournal(journalStream: string | undefined): boolean {
  const named = /^(\d+):(\d+)$/.exec(journalStream ?? '');
  if (!named) return false;
  try {
    const stderr = fstatSync(2, { bigint: true });
    return stderr.dev === BigInt(named[1]!) && stderr.ino === BigInt(named[2]!);
  } catch {
    return false; // no stderr at all: nothing to prefix for
  }
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
