import { libc } from '../../base/index.ts';

/**
 * Memory for the entitlement index's big buffers (its arena and slots, 100+ MB for a million DOIs), which the
 * kernel is asked to back with 2 MiB pages (madvise MADV_HUGEPAGE) where it can. Each request reads a few hundred
 * random lines of them; in 4 KiB pages every read also walks the page table, and the few page walks the CPU runs
 * at once, not the memory, then bound how many reads overlap (100 open DOIs a request, 1.07M holdings: about 6%
 * of the daemon's CPU a request, measured). Most distributions set transparent huge pages to `madvise`, which
 * gives them only to memory that asks; where the call is not there (no glibc, another OS) the memory is plain.
 */

const HUGE_PAGE = 2 * 1024 * 1024;
/** smaller buffers (tests, a warming table, a small store's index) are plain: 2 MiB pages would not pay */
const LARGE_FROM = 8 * 1024 * 1024;
const MADV_HUGEPAGE = 14;

/** n zeroed bytes; from LARGE_FROM on aligned to 2 MiB and advised to be backed by huge pages, where possible. */
export function largeBytes(n: number): Uint8Array<ArrayBuffer> {
  if (n < LARGE_FROM) return new Uint8Array(n);
  const c = libc();
  if (!c) return new Uint8Array(n);
  // advised before first written: the pages are then faulted in huge, not merged later by the kernel's scanner
  const buffer = new ArrayBuffer(n + HUGE_PAGE);
  const base = c.address(new Uint8Array(buffer, 0, 1));
  const offset = (HUGE_PAGE - (base % HUGE_PAGE)) % HUGE_PAGE;
  c.madvise(base + offset, Math.floor(n / HUGE_PAGE) * HUGE_PAGE, MADV_HUGEPAGE); // refused (THP off): plain pages
  return new Uint8Array(buffer, offset, n);
}

/** A Uint32Array of n entries in largeBytes memory (the index's slots). */
export function largeUint32s(n: number): Uint32Array<ArrayBuffer> {
  const bytes = largeBytes(4 * n);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, n);
}
