/**
 * A record of the entitlement index's arena (holdings-table.ts), written and read only here:
 *   u16 keyLen, key bytes, u32 valueLen, value bytes
 * The hot path reads a value in place: where it starts (valueStart) and where it ends (valueEnd), in the arena
 * the lookup was made in, with no view per record.
 */

/** the key's first byte, from the record's start */
export const KEY_OFFSET = 2;

/** The bytes a record of this key and value takes. */
export function recordBytes(keyLen: number, valueLen: number): number {
  return 2 + keyLen + 4 + valueLen;
}

/** Writes the record of key[0, keyLen) and `value` at `at` (recordBytes of room). */
export function writeRecord(arena: Uint8Array, at: number, key: Uint8Array, keyLen: number, value: Uint8Array): void {
  arena[at] = keyLen >>> 8;
  arena[at + 1] = keyLen & 0xff;
  arena.set(key.subarray(0, keyLen), at + KEY_OFFSET);
  const v = at + KEY_OFFSET + keyLen;
  const n = value.length;
  arena[v] = n >>> 24;
  arena[v + 1] = (n >>> 16) & 0xff;
  arena[v + 2] = (n >>> 8) & 0xff;
  arena[v + 3] = n & 0xff;
  arena.set(value, v + 4);
}

export function keyLength(arena: Uint8Array, at: number): number {
  return (arena[at]! << 8) | arena[at + 1]!;
}

/** Where the value of the record at `at` starts. */
export function valueStart(arena: Uint8Array, at: number): number {
  return at + KEY_OFFSET + keyLength(arena, at) + 4;
}

/** Where the value starting at `start` ends (its length is the u32 before it). */
export function valueEnd(arena: Uint8Array, start: number): number {
  return start + (((arena[start - 4]! << 24) | (arena[start - 3]! << 16) | (arena[start - 2]! << 8) | arena[start - 1]!) >>> 0);
}

/** The bytes the record at `at` takes. */
export function recordSize(arena: Uint8Array, at: number): number {
  return valueEnd(arena, valueStart(arena, at)) - at;
}
