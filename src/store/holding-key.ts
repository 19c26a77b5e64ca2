/** Holding keys: utf8(doiKey) 0x00 utf8(platform). 0x00 sorts below every DOI byte, so all platforms of a DOI
 * are one contiguous range, and the store's order is "DOI key, then platform". */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const platformBytes = new Map<string, Uint8Array>();

/** Built byte by byte for ASCII DOI keys (nearly all): a third of the cost of Buffer.from on a template string,
 * and this runs once per deposit record. */
export function holdingKey(doiKey: string, platform: string): Uint8Array {
  let p = platformBytes.get(platform);
  if (!p) platformBytes.set(platform, (p = encoder.encode(platform)));
  const n = doiKey.length;
  const out = new Uint8Array(n + 1 + p.length);
  for (let i = 0; i < n; i++) {
    const c = doiKey.charCodeAt(i);
    if (c >= 0x80) return Buffer.from(`${doiKey}\u0000${platform}`, 'utf8');
    out[i] = c;
  }
  out[n] = 0;
  out.set(p, n + 1);
  return out;
}

export function doiRange(doiKey: string): { start: Buffer; end: Buffer } {
  const start = Buffer.from(`${doiKey}\u0000`, 'utf8');
  const end = Buffer.from(`${doiKey}\u0001`, 'utf8');
  return { start, end };
}

export function splitHoldingKey(key: Uint8Array): { doiKey: string; platform: string } {
  const at = key.indexOf(0);
  return { doiKey: decoder.decode(key.subarray(0, at)), platform: decoder.decode(key.subarray(at + 1)) };
}

export { encoder as keyTextEncoder };
