import { ptr } from 'bun:ffi';
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { largeBytes, largeUint32s } from '../../../src/entitlement/holdings-index/large-memory.ts';

const MiB = 1024 * 1024;
const thpMode = (() => {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1];
  } catch {
    return undefined; // not Linux, or no THP
  }
})();
/** A field of the mapping that holds `address`, from /proc/self/smaps (the process's totals move as other tests free memory). */
function smapsFieldAt(address: number, field: 'AnonHugePages' | 'VmFlags'): string | undefined {
  let inside = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) inside = parseInt(range[1]!, 16) <= address && address < parseInt(range[2]!, 16);
    else if (inside && line.startsWith(`${field}:`)) return line.slice(field.length + 1).trim();
  }
  return undefined;
}

test('small buffers are plain, zeroed typed arrays of the size asked for', () => {
  const b = largeBytes(1000);
  expect(b.length).toBe(1000);
  expect(b.byteOffset).toBe(0);
  expect(b.every((x) => x === 0)).toBe(true);
  const i = largeUint32s(10);
  expect(i.length).toBe(10);
  expect(i.every((x) => x === 0)).toBe(true);
});

test.if(process.platform === 'linux')(
  'a large buffer starts on a 2 MiB boundary, is zeroed, keeps what is written, and is advised to be backed by huge pages where THP allows',
  () => {
    const b = largeBytes(24 * MiB + 123);
    expect(b.length).toBe(24 * MiB + 123);
    expect(ptr(b) % (2 * MiB)).toBe(0);
    expect(b[0]).toBe(0);
    expect(b[b.length - 1]).toBe(0);
    b.fill(7);
    expect(b[12 * MiB]).toBe(7);
    const ints = largeUint32s(4 * MiB);
    expect(ptr(ints) % (2 * MiB)).toBe(0);
    ints[4 * MiB - 1] = 0xfffffffe;
    expect(ints[4 * MiB - 1]).toBe(0xfffffffe);
    // the mapping is advised (VmFlags `hg`: MADV_HUGEPAGE). How many huge pages it then gets is the kernel's and the
    // allocator's: memory the process had faulted in before (another test's, freed) keeps its 4 KiB pages until
    // khugepaged merges them, and a busy machine may have no free 2 MiB frames; so that is printed, not asserted
    if (thpMode === 'always' || thpMode === 'madvise') {
      for (const at of [ptr(b), ptr(ints)]) expect(smapsFieldAt(at, 'VmFlags')?.split(' ')).toContain('hg');
      console.log(`  huge pages in the buffer's mapping: ${smapsFieldAt(ptr(b), 'AnonHugePages')}`);
    }
  },
);
