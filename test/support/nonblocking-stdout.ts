import { dlopen, FFIType } from 'bun:ffi';

/**
 * Runs src/main.ts with its stdout made non-blocking first, as a parent sharing its pipe may hand it over: a
 * write to a full pipe then fails with EAGAIN instead of waiting (Bun.spawn gives a child blocking descriptors,
 * so only the child itself can do this). Arguments are the program's. Linux (glibc) only.
 */
const { symbols } = dlopen('libc.so.6', {
  fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
});
const F_GETFL = 3;
const F_SETFL = 4;
const O_NONBLOCK = 0o4000;
if (symbols.fcntl(1, F_SETFL, symbols.fcntl(1, F_GETFL, 0) | O_NONBLOCK) !== 0)
  throw new Error('fcntl(1, F_SETFL, O_NONBLOCK) failed');
await import('../../src/main.ts');
