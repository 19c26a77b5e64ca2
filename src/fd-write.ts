import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `bytes` to a file descriptor before returning: the bytes are out of the process (no JS buffer grows
 * behind a slow reader, and a kill loses nothing written). A full non-blocking pipe (EAGAIN) is waited on, 1 ms at a
 * time, as a blocking write would; after `giveUpMs` of that (a reader that is gone) the offset reached is returned.
 */
export function writeAllSync(fd: number, bytes: Uint8Array, giveUpMs = 10_000): number {
  let at = 0;
  for (let waited = 0; at < bytes.length; ) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || waited >= giveUpMs) break;
      Atomics.wait(pause, 0, 0, 1);
      waited++;
    }
  }
  return at;
}
