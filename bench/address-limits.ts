/**
 * The status page's limit per client address (src/http/limits/address-limits.ts) once it is full: 65,536 readers
 * remembered, then a flood of addresses never seen before, each of which makes a bucket and forgets the reader seen
 * least recently. Prints the mean cost of one such admit (µs) over three rounds of 200,000 new addresses, and of
 * one admit of a reader already remembered, for comparison. Prints only; run with `bun bench/address-limits.ts`.
 */
import { AddressLimits, ClientAddresses, MAX_READERS, notePeer } from '../src/http/limits/index.ts';

const ROUND = 200_000;

function request(address: string): Request {
  const r = new Request('http://127.0.0.1/doi/10.1/x');
  notePeer(r, address);
  return r;
}

/** 10.x.y.z addresses from a counter: a new reader each */
function address(n: number): string {
  return `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

const limits = new AddressLimits({ perSecond: 1, burst: 5 }, new ClientAddresses());
let next = 0;
for (; next < MAX_READERS; next++) limits.admit(request(address(next)));

for (let round = 1; round <= 3; round++) {
  // requests made outside the timing: only admit is measured
  const flood = Array.from({ length: ROUND }, () => request(address(next++)));
  const t0 = performance.now();
  for (const r of flood) limits.admit(r);
  const newUs = ((performance.now() - t0) * 1000) / ROUND;
  const again = Array.from({ length: ROUND }, (_, i) => request(address(next - 1 - (i % 1000))));
  const t1 = performance.now();
  for (const r of again) limits.admit(r);
  const seenUs = ((performance.now() - t1) * 1000) / ROUND;
  console.log(
    `round ${round}: new reader (evicts one) ${newUs.toFixed(2)} µs/admit; reader seen before ${seenUs.toFixed(2)} µs/admit; readers ${limits.size}`,
  );
}
