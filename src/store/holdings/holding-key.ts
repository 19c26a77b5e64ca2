import type { Database } from 'lmdb';

/** Holding keys: utf8(doiKey) 0x00 utf8(platform). 0x00 sorts below every DOI byte, so all platforms of a DOI
 * are one contiguous range, and the store's order is "DOI key, then platform". */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The key bytes (encoded-records.ts writes ASCII keys in place and comes here for the others). */
export function holdingKey(doiKey: string, platform: string): Uint8Array {
  return encoder.encode(`${doiKey}\u0000${platform}`);
}

function doiRange(doiKey: string): { start: Buffer; end: Buffer } {
  const start = Buffer.from(`${doiKey}\u0000`, 'utf8');
  const end = Buffer.from(`${doiKey}\u0001`, 'utf8');
  return { start, end };
}

export function splitHoldingKey(key: Uint8Array): { doiKey: string; platform: string } {
  const at = key.indexOf(0);
  return { doiKey: decoder.decode(key.subarray(0, at)), platform: decoder.decode(key.subarray(at + 1)) };
}

export { encoder as keyTextEncoder };

export type HoldingFilter = { platform?: string; doiKey?: string };

/** The holdings database's entries in store order: of one DOI key or all, of one platform or all (its key bytes compared). */
export function* holdingEntries(
  db: Database<Uint8Array, Uint8Array>,
  filter: HoldingFilter,
): Generator<{ key: Uint8Array; value: Uint8Array }> {
  const range = filter.doiKey !== undefined ? doiRange(filter.doiKey) : {};
  const platform = filter.platform === undefined ? undefined : encoder.encode(filter.platform);
  for (const entry of db.getRange(range)) if (!platform || platformIs(entry.key, platform)) yield entry;
}

function platformIs(key: Uint8Array, platform: Uint8Array): boolean {
  const at = key.indexOf(0) + 1;
  if (key.length - at !== platform.length) return false;
  for (let i = 0; i < platform.length; i++) if (key[at + i] !== platform[i]) return false;
  return true;
}
