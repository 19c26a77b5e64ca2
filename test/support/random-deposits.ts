import { expect } from 'bun:test';
import type { ApplyStatus, FileStatus, PreparedFile, Store } from '../../src/store/index.ts';
import { seeded } from './fixtures.ts';
import { preparedFile } from './prepared-file.ts';

/** Random deposit files and what the store keeps of them, to hold one way of applying files to another. */

const PLATFORMS = ['acme', 'beta', 'gamma'];
const ACCESS = ['paid', 'open', 'free', 'permFree', undefined];

/**
 * Random deposit files over a small pool of DOIs, so that one DOI comes in many files and platforms: adds,
 * changes of access and links, removals, re-adds, the DOI in another letter case, a DOI twice in one file (the
 * later line wins), and lines the parser rejects. The same seed gives the same files, keys included.
 */
export function randomFiles(seed: number, count: number): PreparedFile[] {
  const rand = seeded(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const doi = () => {
    const d = `10.5555/Pool.${Math.floor(rand() * 60)}`;
    return rand() < 0.2 ? d.toUpperCase() : d;
  };
  return Array.from({ length: count }, (_, i) => {
    const lines = Array.from({ length: 1 + Math.floor(rand() * 40) }, (): object => {
      const r = rand();
      if (r < 0.2) return { doi: doi(), deleted: true };
      if (r < 0.25) return { doi: 'not a doi', accessType: 'open' };
      if (r < 0.28) return { doi: doi(), accessType: 'gratis' };
      const a = pick(ACCESS);
      return {
        doi: doi(),
        ...(a ? { accessType: a } : {}),
        ...(rand() < 0.6
          ? { vor: [{ url: `https://h.example/${Math.floor(rand() * 3)}.pdf`, contentType: 'application/pdf' }] }
          : {}),
      };
    });
    const platform = pick(PLATFORMS);
    return {
      ...preparedFile(lines, { platform, time: 1_700_000_000_000 + i * 1000 }),
      key: `${platform}/00000000-0000-4000-8000-${String(i).padStart(12, '0')}.jsonl.gz`,
      hash: `hash-${seed}-${i}`,
      inOrderGiven: true,
    };
  });
}

/** Everything the store keeps of the holdings and files, but the apply timings and when entries were recorded. */
export function stateOf(store: Store) {
  const ledger = [...store.ledger()].map((e) => ({
    ...e,
    recordedAt: undefined,
    timings: { ...e.timings, applyMs: undefined },
  }));
  return {
    holdings: [...store.holdingHistories()],
    ledger,
    live: store.liveCounts(),
    byAccess: store.liveCountsByAccess(),
    seq: store.appliedSeq().seq,
  };
}

/**
 * The general path the store's access counters are held to: every live holding read and counted by platform and
 * access type. Platforms whose counters read 0 (every holding removed) count as none.
 */
export function countedFromHoldings(store: Store): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const h of store.liveHoldings()) {
    const byAccess = (out[h.platform] ??= { paid: 0, open: 0, free: 0, permFree: 0, none: 0 });
    byAccess[h.state.accessType ?? 'none']!++;
  }
  return out;
}

/** The store's access counters, as the full count gives them; and per platform, their sum is the live counter. */
export function accessCountersHeld(store: Store): void {
  const counters = store.liveCountsByAccess();
  if (!counters) throw new Error('the access counters do not agree with the holdings (liveCountsByAccess: undefined)');
  const nonZero: Record<string, Record<string, number>> = Object.fromEntries(
    Object.entries(counters).filter(([, c]) => Object.values(c).some((n) => n !== 0)),
  );
  expect(nonZero).toEqual(countedFromHoldings(store));
  const sums = Object.fromEntries(
    Object.entries(counters).map(([p, c]) => [p, Object.values(c).reduce((a, b) => a + b)]),
  );
  const live = store.liveCounts();
  for (const p of new Set([...Object.keys(sums), ...Object.keys(live)]))
    expect([p, sums[p] ?? 0]).toEqual([p, live[p] ?? 0]);
}

/** What an applied-files listener is told: per file, its sequence number, platform and records. */
export function toldOf(store: Store): string[] {
  const told: string[] = [];
  store.onApplied((files) =>
    files.forEach((f) => told.push(`${f.seq} ${f.platform} ${Buffer.from(f.records.bytes).toString('hex')}`)),
  );
  return told;
}

export function outcomes(statuses: readonly (ApplyStatus | FileStatus)[]): string[] {
  return statuses.map((s) =>
    s.status === 'applied' ? `applied ${s.entry.key} ${JSON.stringify(s.entry.counts)}` : s.status,
  );
}
