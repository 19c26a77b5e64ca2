import { dlopen, FFIType, ptr } from 'bun:ffi';

/**
 * The C library functions the service calls itself, through bun:ffi: madvise (huge pages for the entitlement
 * index, src/entitlement/holdings-index/large-memory.ts) and memcpy (the replies' long copies, src/bytes/byte-writer.ts). Null
 * where the library is not there (no glibc, another OS): callers then do without (plain pages, TypedArray.set).
 */
export interface Libc {
  madvise(address: number, length: number, advice: number): number;
  /** copies n bytes between addresses: the caller has checked both ranges (nothing here can) */
  memcpy(to: number, from: number, n: number): void;
  /**
   * Where a typed array's bytes start: stable while the array lives. A small array made in JS keeps its bytes
   * in the garbage-collected heap until something asks for its ArrayBuffer, which moves them out: this asks
   * first, so the address taken is where they stay. 0 for an empty array (no copy of it can pass a bounds check).
   */
  address(bytes: Uint8Array): number;
}

let loaded: Libc | null | undefined;

export function libc(): Libc | null {
  if (loaded === undefined) loaded = load();
  return loaded;
}

function load(): Libc | null {
  if (process.platform !== 'linux') return null;
  try {
    const { symbols } = dlopen('libc.so.6', {
      madvise: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
      memcpy: { args: [FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.void },
    });
    return {
      madvise: (address, length, advice) => symbols.madvise(address, length, advice) as number,
      memcpy: symbols.memcpy as (to: number, from: number, n: number) => void,
      address: (bytes) => {
        if (bytes.length === 0) return 0; // ptr() refuses one, or not, by how hot the call is
        void bytes.buffer; // fixes where the bytes live (see Libc.address)
        return ptr(bytes);
      },
    };
  } catch {
    return null;
  }
}
