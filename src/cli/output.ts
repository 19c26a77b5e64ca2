import { writeAllSync } from '../fd-write.ts';

/** Where commands write: injected so tests and the daemon share the code. */
export interface Output {
  out(line: string): void;
  /** whole lines as UTF-8 bytes, newlines included (the caller may reuse the bytes once this returns) */
  outBytes(lines: Uint8Array): void;
  err(line: string): void;
}

/**
 * The process's stdout and stderr. Lines for stdout gather in a 64 KiB buffer written with a blocking write when
 * full (a --dump of millions of lines costs one system call per buffer, and memory stays flat whatever the reader's
 * pace); it is written out before any stderr line, so the two keep their order, and by flushOutput() at exit.
 */
const OUT_CHUNK = 64 * 1024;
let pending: string[] = [];
let pendingBytes = 0;

/** stdout's reader is gone (`--dump | head`): the command stops there, quietly (main.ts). */
export class StdoutClosed extends Error {}

export function flushOutput(): void {
  if (pending.length === 0) return;
  const bytes = Buffer.from(pending.join(''));
  pending = [];
  pendingBytes = 0;
  if (writeAllSync(1, bytes) < bytes.length) throw new StdoutClosed('stdout: the reader is gone');
}

export const processOutput: Output = {
  out: (line) => {
    pending.push(line, '\n');
    pendingBytes += line.length + 1;
    if (pendingBytes >= OUT_CHUNK) flushOutput();
  },
  outBytes: (lines) => {
    flushOutput();
    if (writeAllSync(1, lines) < lines.length) throw new StdoutClosed('stdout: the reader is gone');
  },
  err: (line) => {
    flushOutput();
    process.stderr.write(`${line}\n`);
  },
};

/** Exit codes (README, "Operating it"): 0 ok, 1 input faults found, 2 usage or config error. */
export const EXIT_OK = 0;
export const EXIT_INPUT_FAULTS = 1;
export const EXIT_USAGE = 2;
