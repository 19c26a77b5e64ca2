import { JsonBytes } from '../../bytes/index.ts';
import type { Store } from '../../store/index.ts';
import type { TableBuilder } from './holdings-table.ts';
import { type PlatformNumbers, writeHolding } from './index-value.ts';
import type { LinkShapes } from './link-shapes.ts';

/**
 * Every live holding of the store as index records, added to a table builder, written from the stored bytes (holding-json.ts):
 * a hundred million holdings may be read here, so nothing is decoded into objects, and the table is made by a
 * builder (records as they come, slots once at the end: no copy, nothing made twice). The values are those a
 * followed file writes (test/entitlement/holdings-index/holdings-index.test.ts compares them).
 */
export function readIndexRecords(
  store: Store,
  numbers: PlatformNumbers,
  shapes: LinkShapes,
  table: TableBuilder,
): void {
  const value = new JsonBytes();
  const scratch = new JsonBytes(1024);
  const platforms = new PlatformBytes(numbers);
  // the DOI key whose value is being written (the store's key bytes are not ours to keep between steps)
  let key = new Uint8Array(256);
  let keyLen = -1;
  for (const h of store.storedHoldings()) {
    if (!startsWith(h.key, h.doiKeyEnd, key, keyLen)) {
      if (keyLen >= 0) table.add(key, 0, keyLen, value.buf, 0, value.pos);
      keyLen = h.doiKeyEnd;
      if (keyLen > key.length) key = new Uint8Array(2 * keyLen);
      const from = h.key;
      for (let i = 0; i < keyLen; i++) key[i] = from[i]!; // a loop: a subarray() per DOI was a fifth of a build
      value.reset();
    }
    writeHolding(value, platforms.numberOf(h.key, h.platformStart), h, shapes, scratch);
  }
  if (keyLen >= 0) table.add(key, 0, keyLen, value.buf, 0, value.pos);
}

function startsWith(b: Uint8Array, n: number, key: Uint8Array, keyLen: number): boolean {
  if (n !== keyLen) return false;
  for (let i = 0; i < n; i++) if (b[i] !== key[i]) return false;
  return true;
}

/**
 * Platform numbers by the name's bytes at the end of a key, without decoding: a few dozen platforms, found by a
 * hash of the bytes (comparing each known name in turn was a twentieth of a build of 20 platforms).
 */
class PlatformBytes {
  private readonly known = new Map<number, { bytes: Uint8Array; n: number }[]>();
  private readonly decoder = new TextDecoder();

  constructor(private readonly numbers: PlatformNumbers) {}

  numberOf(key: Uint8Array, start: number): number {
    const len = key.length - start;
    let hash = len;
    for (let i = start; i < key.length; i++) hash = Math.imul(hash ^ key[i]!, 0x01000193);
    const candidates = this.known.get(hash);
    if (candidates) {
      for (const k of candidates) {
        if (k.bytes.length !== len) continue;
        let i = 0;
        while (i < len && k.bytes[i] === key[start + i]) i++;
        if (i === len) return k.n;
      }
    }
    const n = this.numbers.numberOf(this.decoder.decode(key.subarray(start)));
    if (candidates) candidates.push({ bytes: key.slice(start), n });
    else this.known.set(hash, [{ bytes: key.slice(start), n }]);
    return n;
  }
}
