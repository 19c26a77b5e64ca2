/**
 * The second Int32 of a HoldingsTable slot: the key's hash in HASH_BITS (probes compare these bits, and a key's
 * first slot is taken from them), and above them how many cache lines past its first the key's record spans, at
 * most 7: how far touchRecord reads ahead without waiting for the record's own length to arrive from memory.
 */
export const HASH_BITS = 0x0fffffff;
const LINES_SHIFT = 28;

/** The field for the key of hash h whose record is arena[at, at + size). */
export function slotHash(h: number, at: number, size: number): number {
  return (h & HASH_BITS) | (Math.min(7, ((at + size - 1) >> 6) - (at >> 6)) << LINES_SHIFT);
}

/** The lines past its first that the record of a slot with this field spans. */
export function linesPast(field: number): number {
  return field >>> LINES_SHIFT;
}
