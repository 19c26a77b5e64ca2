import type { Transaction } from 'lmdb';
import { sameBytes } from '../../bytes/index.ts';
import { META, type StoreDbs } from '../environment/index.ts';
import { ACCESS_CODES, liveAccessCode } from '../holdings/index.ts';

/**
 * Live holdings per platform (`live:<platform>`) and per platform and access type (`liveByAccess:<platform>`: an
 * array indexed by access code) are counters in META, moved in the transaction that writes the holdings
 * (docs/design.md, "Store layout"). Records count into a file's `access` deltas in nextValue (apply-records.ts),
 * for passes and sorted passes alike; here the deltas reach the counters, and a store without them is counted once.
 */

/** The access types as the counters name them, in the order the console shows them; `none`: no access type. */
export const ACCESS_COLUMNS = ['paid', 'open', 'free', 'permFree', 'none'] as const;
export type AccessCounts = Record<(typeof ACCESS_COLUMNS)[number], number>;

/** A file's live holdings moved per access code (index: ACCESS_CODES), counted by nextValue. */
export function accessDelta(): Int32Array {
  return new Int32Array(ACCESS_CODES.length);
}

/** What one applied file moved: its platform, added - removed, and its access deltas. */
export interface LiveMove {
  platform: string;
  live: number;
  access: ArrayLike<number>;
}

/**
 * Adds applied files' moves to their platforms' counters, in the caller's write transaction, once the files took
 * their sequence numbers. `seqBefore` is the `nextSeq` the transaction found: when the access counters agreed with
 * it, they agree with the new one (else they stay behind, and the next writable open counts them again).
 */
export function addLiveCounts(dbs: StoreDbs, moves: readonly LiveMove[], seqBefore: number): void {
  const { meta } = dbs;
  const byPlatform = new Map<string, { live: number; access: number[] }>();
  for (const m of moves) {
    let p = byPlatform.get(m.platform);
    if (!p) byPlatform.set(m.platform, (p = { live: 0, access: new Array(ACCESS_CODES.length).fill(0) }));
    p.live += m.live;
    for (let c = 0; c < ACCESS_CODES.length; c++) p.access[c]! += m.access[c]!;
  }
  for (const [platform, { live, access }] of byPlatform) {
    const counter = META.live(platform);
    if (live !== 0) meta.putSync(counter, ((meta.get(counter) as number | undefined) ?? 0) + live);
    if (access.every((n) => n === 0)) continue;
    const key = META.liveByAccess(platform);
    const stored = (meta.get(key) as number[] | undefined) ?? [];
    meta.putSync(
      key,
      access.map((n, c) => (stored[c] ?? 0) + n),
    );
  }
  const seq = nextSeq(dbs);
  if (seq !== seqBefore && meta.get(META.liveByAccessAt) === seqBefore) meta.putSync(META.liveByAccessAt, seq);
}

export function liveCounts(dbs: StoreDbs): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { key, value } of dbs.meta.getRange(META.liveRange))
    out[META.platformOfLive(key as string)] = value as number;
  return out;
}

/**
 * Live holdings per platform and access type, or undefined when the counters do not agree with the holdings: a
 * store no writable open of this program has counted yet (a read-only open), or one an older program wrote since.
 */
export function liveCountsByAccess(dbs: StoreDbs): Record<string, AccessCounts> | undefined {
  if (dbs.meta.get(META.liveByAccessAt) !== nextSeq(dbs)) return undefined;
  const out: Record<string, AccessCounts> = {};
  for (const { key, value } of dbs.meta.getRange(META.liveByAccessRange))
    out[META.platformOfLiveByAccess(key as string)] = named(value as number[]);
  return out;
}

/** Counts by code as counts by name, in ACCESS_COLUMNS' order. */
function named(byCode: readonly number[]): AccessCounts {
  const out = {} as AccessCounts;
  for (const a of ACCESS_COLUMNS) out[a] = byCode[ACCESS_CODES.indexOf(a === 'none' ? undefined : a)] ?? 0;
  return out;
}

function nextSeq(dbs: StoreDbs, transaction?: Transaction): number {
  return (metaOf(dbs, META.nextSeq, transaction) as number | undefined) ?? 1;
}

/** A META value, from `transaction` when given (an options object without one changes how lmdb-js reads). */
function metaOf(dbs: StoreDbs, key: string, transaction: Transaction | undefined): unknown {
  return transaction ? dbs.meta.get(key, { transaction }) : dbs.meta.get(key);
}

/** Live holdings per platform and access code, read whole (the one-time count). */
function countHoldings(dbs: StoreDbs, transaction?: Transaction): Map<string, number[]> {
  // platforms found by a hash of their key bytes, nothing made per holding: a string and a decoded layout per
  // holding made the count about three times as long (1M holdings: 3.3-3.8 s against 0.7-1.2 s)
  const byHash = new Map<number, { platform: Uint8Array; counts: number[] }[]>();
  for (const { key, value } of dbs.holdings.getRange(transaction ? { transaction } : {})) {
    const code = liveAccessCode(value);
    if (code < 0) continue;
    const at = key.indexOf(0) + 1;
    let h = 0x811c9dc5;
    for (let i = at; i < key.length; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
    let same = byHash.get(h);
    if (!same) byHash.set(h, (same = []));
    let p = same.find((e) => sameBytes(e.platform, 0, e.platform.length, key, at, key.length));
    if (!p) same.push((p = { platform: key.slice(at), counts: new Array(ACCESS_CODES.length).fill(0) }));
    p.counts[code]!++;
  }
  const decoder = new TextDecoder();
  return new Map([...byHash.values()].flat().map((p) => [decoder.decode(p.platform), p.counts]));
}

/**
 * Counts the access counters from the holdings when they do not agree with them (a store from before them, or one
 * an older program wrote since), on a writable open: the holdings read in one read snapshot (writers go on), then
 * written in one write transaction if no holding was written meanwhile (else counted again inside it). A sorted
 * pass standing has written some holdings whose counts land at its end: its files' access deltas so far are taken
 * off (one that an older program began kept none: its deltas start again from here, and the count already holds
 * its chunks). The time it took, or undefined when the counters agreed.
 */
export function syncLiveByAccess(dbs: StoreDbs, afterRead?: () => void): { holdings: number; ms: number } | undefined {
  // a pass an older program began (after a rollback) moved no counter with its chunks: counted too
  const pass = dbs.meta.get(META.sortedPass) as PassAccess | undefined;
  if (dbs.meta.get(META.liveByAccessAt) === nextSeq(dbs) && (!pass || pass.access)) return undefined;
  const t0 = performance.now();
  const txn = dbs.root.useReadTransaction();
  let read: { mark: string; counts: Map<string, number[]> };
  try {
    read = { mark: writeMark(dbs, txn), counts: countHoldings(dbs, txn) };
  } finally {
    txn.done();
  }
  afterRead?.();
  let holdings = 0;
  dbs.root.transactionSync(() => {
    const counts = writeMark(dbs) === read.mark ? read.counts : countHoldings(dbs);
    takeOffStandingPass(dbs, counts);
    // a copy of the range: lmdb-js's getKeys marks the options object it is given as values-less
    for (const key of dbs.meta.getKeys({ ...META.liveByAccessRange })) dbs.meta.removeSync(key);
    for (const [platform, byCode] of counts) {
      dbs.meta.putSync(META.liveByAccess(platform), byCode);
      holdings += byCode.reduce((a, b) => a + b, 0);
    }
    dbs.meta.putSync(META.liveByAccessAt, nextSeq(dbs));
  });
  return { holdings, ms: Math.round(performance.now() - t0) };
}

/** What moves whenever holdings are written: the apply sequence number, and a standing sorted pass's progress. */
function writeMark(dbs: StoreDbs, transaction?: Transaction): string {
  const pass = metaOf(dbs, META.sortedPass, transaction) as { id: string; applied: number } | undefined;
  return `${nextSeq(dbs, transaction)} ${pass?.id} ${pass?.applied}`;
}

/** The stored pass record's fields this module reads and writes (sorted-pass/apply-pass.ts, PassRecord). */
interface PassAccess {
  access?: number[];
}

/** A standing pass's access moves so far taken off `counts`: they land at its end (none kept by an older program's). */
function takeOffStandingPass(dbs: StoreDbs, counts: Map<string, number[]>): void {
  const pass = dbs.meta.get(META.sortedPass) as PassAccess | undefined;
  if (!pass) return;
  const files = dbs.meta.get(META.sortedPassFiles) as { entry: { platform?: string } }[];
  if (!pass.access) {
    dbs.meta.putSync(META.sortedPass, { ...pass, access: new Array(files.length * ACCESS_CODES.length).fill(0) });
    return;
  }
  files.forEach((f, i) => {
    const platform = f.entry.platform!;
    let byCode = counts.get(platform);
    if (!byCode) counts.set(platform, (byCode = new Array(ACCESS_CODES.length).fill(0)));
    for (let c = 0; c < ACCESS_CODES.length; c++) byCode[c]! -= pass.access![i * ACCESS_CODES.length + c]!;
  });
}
