import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** How long a write to stderr waits on a full pipe: a log nobody reads must not hang the process (base/log.ts, cli/output.ts). */
export const STDERR_GIVE_UP_MS = 10_000;

/** Why a write stopped short: the errno's code (`EPIPE`, `ENOSPC`, ...) and the system's words for it. */
export interface WriteFailure {
  readonly errno: string;
  readonly message: string;
}

/** How far a write got: `at` is all of the bytes unless `failure` says why not. */
export interface Written {
  readonly at: number;
  readonly failure?: WriteFailure;
}

/**
 * Writes all of `bytes` to a file descriptor before returning: the bytes are out of the process (no JS buffer grows
 * behind a slow reader, and a kill loses nothing written). A full non-blocking pipe (EAGAIN) is waited on as a
 * blocking write would: a reader that is slow, or paused (`| less` at its prompt), is still there, and one that
 * is gone makes the write fail with EPIPE, so by default there is no giving up. `giveUpMs` bounds that wait for
 * a writer that must not hang (the daemon's log lines: base/log.ts); past it the failure is EAGAIN. Any other error
 * stops the write and is returned, never thrown: the caller decides what it means.
 */
export function writeAllSync(fd: number, bytes: Uint8Array, giveUpMs = Infinity): Written {
  let at = 0;
  let waited = 0;
  let nap = 1;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
      nap = 1;
    } catch (e) {
      const { code, message } = e as NodeJS.ErrnoException;
      if (code === undefined) throw e; // no system call's error: a bug
      if (code === 'EINTR') continue;
      if (code !== 'EAGAIN') return { at, failure: { errno: code, message } };
      if (waited >= giveUpMs)
        return { at, failure: { errno: code, message: `${message}: the reader took nothing for ${waited} ms` } };
      // 1 ms, doubling to 16 ms while the pipe stays full: a paused reader costs a few wake-ups a second, not 1,000
      Atomics.wait(pause, 0, 0, nap);
      waited += nap;
      nap = Math.min(nap * 2, 16);
    }
  }
  return { at };
}
