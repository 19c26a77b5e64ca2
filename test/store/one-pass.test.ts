import { afterEach, beforeEach, expect, test } from 'bun:test';
import { Store, type ApplyStatus, type PreparedFile } from '../../src/store/index.ts';
import { seeded, tempDir } from '../support/fixtures.ts';
import { preparedFile } from '../support/prepared-file.ts';

/**
 * A backlog applies in one pass (docs/design.md, "A backlog in one pass"): several files in one transaction, their
 * records merged and written in key order. What it leaves must be what applying the files one at a time leaves:
 * every holding with its history, every ledger entry and count, the live counters and what listeners are told.
 */

let dir: ReturnType<typeof tempDir>;
let stores: Store[];

beforeEach(() => {
  dir = tempDir();
  stores = ['production', 'staging'].map((env) => Store.open(dir.path, env as 'production', { mapSizeBytes: 1 << 28 }));
});
afterEach(async () => {
  for (const s of stores) await s.close();
  dir.remove();
});

const PLATFORMS = ['acme', 'beta', 'gamma'];
const ACCESS = ['paid', 'open', 'free', 'permFree', undefined];

/**
 * Random deposit files over a small pool of DOIs, so that one DOI comes in many files and platforms: adds,
 * changes of access and links, removals, re-adds, the DOI in another letter case, a DOI twice in one file (the
 * later line wins), and lines the parser rejects. The same seed gives the same files, keys included.
 */
function randomFiles(seed: number, count: number): PreparedFile[] {
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
      return { doi: doi(), ...(a ? { accessType: a } : {}), ...(rand() < 0.6 ? { vor: [{ url: `https://h.example/${Math.floor(rand() * 3)}.pdf`, contentType: 'application/pdf' }] } : {}) };
    });
    const platform = pick(PLATFORMS);
    return { ...preparedFile(lines, { platform, time: 1_700_000_000_000 + i * 1000 }), key: `${platform}/00000000-0000-4000-8000-${String(i).padStart(12, '0')}.jsonl.gz`, hash: `hash-${seed}-${i}`, inOrderGiven: true };
  });
}

/** Everything the store keeps of the holdings and files, but the apply timings and when entries were recorded. */
function stateOf(store: Store) {
  const ledger = [...store.ledger()].map((e) => ({ ...e, recordedAt: undefined, timings: { ...e.timings, applyMs: undefined } }));
  return { holdings: [...store.holdingHistories()], ledger, live: store.liveCounts(), seq: store.appliedSeq().seq };
}

/** What an applied-files listener is told: per file, its sequence number, platform and records. */
function toldOf(store: Store): string[] {
  const told: string[] = [];
  store.onApplied((files) => files.forEach((f) => told.push(`${f.seq} ${f.platform} ${Buffer.from(f.records.bytes).toString('hex')}`)));
  return told;
}

function outcomes(statuses: ApplyStatus[]): string[] {
  return statuses.map((s) => (s.status === 'applied' ? `applied ${s.entry.key} ${JSON.stringify(s.entry.counts)}` : s.status));
}

test('files applied in one pass leave what applying them one at a time leaves', () => {
  for (const seed of [1, 2, 3]) {
    dir.remove();
    dir = tempDir();
    stores = ['production', 'staging'].map((env) => Store.open(dir.path, env as 'production', { mapSizeBytes: 1 << 28 }));
    const [oneAtATime, onePass] = stores as [Store, Store];
    const [toldA, toldB] = [toldOf(oneAtATime), toldOf(onePass)];
    const a = randomFiles(seed, 40).flatMap((f) => outcomes(oneAtATime.applyFilesSync([f])));
    // in passes of random sizes, the first ones over an empty store, the later ones over what they left
    const files = randomFiles(seed, 40);
    const rand = seeded(seed + 100);
    const b: string[] = [];
    for (let i = 0; i < files.length; ) {
      const n = 1 + Math.floor(rand() * 15);
      b.push(...outcomes(onePass.applyFilesSync(files.slice(i, i + n))));
      i += n;
    }
    expect(b).toEqual(a);
    expect(stateOf(onePass)).toEqual(stateOf(oneAtATime));
    expect(toldB).toEqual(toldA);
    const events = stateOf(onePass).holdings.flatMap((h) => h.events.map((e) => e.kind));
    for (const kind of ['added', 'updated', 'removed', 're-added'] as const) expect(events).toContain(kind);
  }
});

test('a pass with files already applied, and a file of a key applied with other content, decides each as alone', () => {
  const [oneAtATime, onePass] = stores as [Store, Store];
  const files = randomFiles(7, 12);
  const conflicting = { ...randomFiles(8, 1)[0]!, key: files[3]!.key };
  const again = [files[2]!, conflicting, ...files.slice(4, 8)];
  const a = [...files.slice(0, 4), ...again].flatMap((f) => outcomes(oneAtATime.applyFilesSync([f])));
  const b = [...outcomes(onePass.applyFilesSync(files.slice(0, 4))), ...outcomes(onePass.applyFilesSync(again))];
  expect(b).toEqual(a);
  expect(b.slice(4, 6)).toEqual(['duplicate', 'conflict']);
  expect(stateOf(onePass)).toEqual(stateOf(oneAtATime));
});
