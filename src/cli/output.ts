import { type Fault, fault, STDERR_GIVE_UP_MS, type WriteFailure, writeAllSync } from '../base/index.ts';

/** Where commands write: injected so tests and the daemon share the code. */
export interface Output {
  out(line: string): void;
  /** whole lines as UTF-8 bytes, newlines included (the caller may reuse the bytes once this returns) */
  outBytes(lines: Uint8Array): void;
  err(line: string): void;
  /** false once stdout takes no more: a command whose only work is its output (--dump) may stop there */
  wanted(): boolean;
}

/**
 * The process's stdout and stderr. Lines for stdout gather in a 64 KiB buffer written with a blocking write when
 * full (a --dump of millions of lines costs one system call per buffer, and memory stays flat whatever the reader's
 * pace); it is written out before any stderr line, so the two keep their order, and by finishOutput() at exit.
 *
 * A failed write never throws: the command runs on (an --ingest applies every file it was given, a --validate
 * checks every file, so their exit codes tell of all of them), the rest of stdout is dropped, and finishOutput()
 * decides the exit code.
 */
const OUT_CHUNK = 64 * 1024;
let pending: string[] = [];
let pendingBytes = 0;

/** stdout's reader took what it wanted and closed the pipe (`--dump | head`): no fault */
const READER_GONE = 'reader gone';
/** what became of stdout: undefined while every write went out whole */
let lost: Fault<'OUTPUT_FAILED'> | typeof READER_GONE | undefined;

/**
 * The one rule for a failed write to stdout: only EPIPE is a reader that left on purpose. Anything else (a full
 * disk, an I/O error, a closed descriptor) lost output that someone meant to keep.
 */
function outputFault(f: WriteFailure): Fault<'OUTPUT_FAILED'> | typeof READER_GONE {
  return f.errno === 'EPIPE' ? READER_GONE : fault('OUTPUT_FAILED', `cannot write the output: ${f.message}`);
}

function writeOut(bytes: Uint8Array): void {
  // after a gap nothing more: what a reader gets is the output's beginning, never a beginning and some later part
  if (lost !== undefined) return;
  const { failure } = writeAllSync(1, bytes);
  if (failure === undefined) return;
  lost = outputFault(failure);
  // said at once, not at exit: an --ingest of many files goes on applying them meanwhile
  if (lost !== READER_GONE) processOutput.err(`doi-holdings: ${lost.code}: ${lost.message}`);
}

function flushOutput(): void {
  if (pending.length === 0) return;
  const bytes = Buffer.from(pending.join(''));
  pending = [];
  pendingBytes = 0;
  writeOut(bytes);
}

export const processOutput: Output = {
  out: (line) => {
    pending.push(line, '\n');
    pendingBytes += line.length + 1;
    if (pendingBytes >= OUT_CHUNK) flushOutput();
  },
  outBytes: (lines) => {
    flushOutput();
    writeOut(lines);
  },
  err: (line) => {
    flushOutput();
    // written out at once, and a stderr that fails too (`>file 2>&1` on a full disk) is let be: no error event
    // may end a command part-way (an --ingest applies every file whatever becomes of its output)
    writeAllSync(2, Buffer.from(`${line}\n`), STDERR_GIVE_UP_MS);
  },
  wanted: () => lost === undefined,
};

/**
 * Writes out what stdout still holds and gives the exit code: the command's own (`code`), unless stdout failed
 * other than by its reader leaving, then EXIT_USAGE (README, "exit codes"), never 0.
 */
export function finishOutput(code: number): number {
  flushOutput();
  return lost === undefined || lost === READER_GONE ? code : EXIT_USAGE;
}

/** Exit codes (README, "Operating it"): 0 ok, 1 input faults found, 2 usage, config or operational error. */
export const EXIT_OK = 0;
export const EXIT_INPUT_FAULTS = 1;
export const EXIT_USAGE = 2;
