import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdirSync, statSync } from 'node:fs';
import { open } from 'lmdb';
import { fault } from '../../src/base/fault.ts';
import { dumpLine } from '../../src/cli/dump-line.ts';
import type { EnvName } from '../../src/config/index.ts';
import { type ParsedDeposit, parseDepositText } from '../../src/deposit/index.ts';
import { META } from '../../src/store/environment/environment.ts';
import { SCHEMA_VERSION } from '../../src/store/environment/index.ts';
import { type PreparedFile, Store } from '../../src/store/index.ts';
import { tempDir } from '../support/fixtures.ts';

let dir: ReturnType<typeof tempDir>;
let store: Store;
let seq = 0;

beforeEach(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

/** The store's live holdings as --dump prints them. */
function dump(filter: { platform?: string; doiKey?: string } = {}) {
  return [...store.liveHoldings(filter)].map((h) => dumpLine(store.env, h));
}

function parsed(lines: object[]): ParsedDeposit {
  const p = parseDepositText(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')));
  if ('code' in p) throw new Error(p.message);
  return p;
}

function file(
  lines: object[],
  opts: { platform?: string; time?: number; key?: string; hash?: string } = {},
): PreparedFile {
  seq++;
  const platform = opts.platform ?? 'acme';
  return {
    key: opts.key ?? `${platform}/00000000-0000-4000-8000-${String(seq).padStart(12, '0')}.jsonl.gz`,
    platform,
    size: 100,
    hash: opts.hash ?? `hash-${seq}`,
    lastModified: opts.time ?? 1_700_000_000_000 + seq * 1000,
    parsed: parsed(lines),
    timings: { readMs: 0, parseMs: 0 },
    tries: 1,
  };
}

describe('holdings', () => {
  test('a record creates an association with its access type and vor links, dumped in --dump form', () => {
    const f = file(
      [
        {
          doi: '10.1234/AbC',
          accessType: 'open',
          vor: [{ url: 'https://p.example/pdf/10.1234/AbC', contentType: 'application/pdf' }],
        },
      ],
      { time: Date.UTC(2026, 10, 1, 9, 30) },
    );
    const [r] = store.applyFilesSync([f]);
    expect(r!.status).toBe('applied');
    expect(JSON.stringify(dump()[0])).toBe(
      '{"env":"production","platform":"acme","doi":"10.1234/AbC","accessType":"open","vor":[{"url":"https://p.example/pdf/10.1234/AbC","contentType":"application/pdf"}],"updated":"2026-11-01T09:30:00.000Z"}',
    );
  });

  test('a later record for the same DOI and platform overwrites the earlier data', () => {
    store.applyFilesSync([file([{ doi: '10.1234/x', accessType: 'paid', vor: [{ url: 'https://a.example/1' }] }])]);
    store.applyFilesSync([file([{ doi: '10.1234/X', accessType: 'open' }])]);
    const lines = dump();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.doi).toBe('10.1234/X');
    expect(lines[0]!.accessType).toBe('open');
    expect(lines[0]!.vor).toBeUndefined();
  });

  test('DOI keys are ASCII-case-insensitive and nothing else is folded', () => {
    store.applyFilesSync([
      file([
        { doi: '10.1234/ÄBC', accessType: 'open' },
        { doi: '10.1234/äbc', accessType: 'paid' },
      ]),
    ]);
    expect(
      dump()
        .map((l) => l.doi)
        .sort(),
    ).toEqual(['10.1234/ÄBC', '10.1234/äbc']);
    store.applyFilesSync([file([{ doi: '10.1234/äBC', accessType: 'free' }])]);
    const lines = dump();
    expect(lines).toHaveLength(2);
    expect(lines.find((l) => l.doi === '10.1234/äBC')!.accessType).toBe('free');
  });

  test('a removal removes the association but keeps the history as a tombstone', () => {
    const t1 = Date.UTC(2026, 0, 1);
    const t2 = Date.UTC(2026, 0, 2);
    store.applyFilesSync([file([{ doi: '10.1234/gone', accessType: 'paid' }], { time: t1 })]);
    const [r] = store.applyFilesSync([file([{ doi: '10.1234/gone', deleted: true }], { time: t2 })]);
    expect(r!.status === 'applied' && r!.entry.counts!.removed).toBe(1);
    expect(dump()).toHaveLength(0);
    const [h] = store.holdingsOf('10.1234/gone');
    expect(h!.live).toBe(false);
    expect(h!.events.map((e) => [e.kind, e.time, e.oldAccess, e.newAccess])).toEqual([
      ['added', t1, undefined, 'paid'],
      ['removed', t2, 'paid', undefined],
    ]);
  });

  test('a removal for a DOI with no association is a no-op, counted as such', () => {
    const [r] = store.applyFilesSync([file([{ doi: '10.1234/never', deleted: true }])]);
    expect(r!.status === 'applied' && r!.entry.counts).toMatchObject({ noopRemovals: 1, removed: 0, added: 0 });
    expect(store.holdingsOf('10.1234/never')).toHaveLength(0);
  });

  test('a re-added DOI after a removal records a re-added event', () => {
    store.applyFilesSync([file([{ doi: '10.1234/back', accessType: 'paid' }])]);
    store.applyFilesSync([file([{ doi: '10.1234/back', deleted: true }])]);
    store.applyFilesSync([file([{ doi: '10.1234/back', accessType: 'open' }])]);
    const [h] = store.holdingsOf('10.1234/back');
    expect(h!.live).toBe(true);
    expect(h!.events.map((e) => e.kind)).toEqual(['added', 'removed', 're-added']);
  });

  test('a record equal to the stored state writes nothing: no event, unchanged count, same updated time', () => {
    const rec = {
      doi: '10.1234/same',
      accessType: 'open',
      vor: [{ url: 'https://x.example/10.1234/same.pdf', contentType: 'application/pdf' }],
    };
    store.applyFilesSync([file([rec], { time: 1_000_000 })]);
    const [r] = store.applyFilesSync([file([rec], { time: 2_000_000 })]);
    expect(r!.status === 'applied' && r!.entry.counts).toMatchObject({ unchanged: 1, updated: 0 });
    const [h] = store.holdingsOf('10.1234/same');
    expect(h!.events).toHaveLength(1);
    expect(h!.updated).toBe(1_000_000);
  });

  test('an access type change is an updated event with old -> new access type, stamped with the file LastModified', () => {
    store.applyFilesSync([file([{ doi: '10.1234/chg', accessType: 'paid' }], { time: 5_000 })]);
    store.applyFilesSync([file([{ doi: '10.1234/chg', accessType: 'permFree' }], { time: 9_000 })]);
    const [h] = store.holdingsOf('10.1234/chg');
    expect(h!.events[1]).toEqual({
      kind: 'updated',
      time: 9_000,
      fileSeq: 2,
      oldAccess: 'paid',
      newAccess: 'permFree',
      changes: [],
    });
    expect(store.fileKeyOfSeq(2)).toMatch(/^acme\//);
  });

  test('an updated event records whether the links or the DOI spelling changed, beside the access type', () => {
    const pdf = (doi: string) => [{ url: `https://x.example/${doi}.pdf`, contentType: 'application/pdf' }];
    store.applyFilesSync([file([{ doi: '10.1234/flags', accessType: 'paid', vor: pdf('10.1234/flags') }])]);
    store.applyFilesSync([
      file([{ doi: '10.1234/flags', accessType: 'paid', vor: [{ url: 'https://x.example/new.html' }] }]),
    ]);
    store.applyFilesSync([
      file([{ doi: '10.1234/FLAGS', accessType: 'open', vor: [{ url: 'https://x.example/new.html' }] }]),
    ]);
    store.applyFilesSync([file([{ doi: '10.1234/Flags', accessType: 'free', vor: pdf('10.1234/Flags') }])]);
    // links are stored around the DOI's spelling: a new spelling with the same links is not a links change,
    store.applyFilesSync([file([{ doi: '10.1234/FLAGS', accessType: 'free', vor: pdf('10.1234/Flags') }])]);
    // and the same bytes around a new spelling are other links
    store.applyFilesSync([file([{ doi: '10.1234/flags', accessType: 'free', vor: pdf('10.1234/flags') }])]);
    const [h] = store.holdingsOf('10.1234/flags');
    expect(h!.events.map((e) => [e.kind, e.oldAccess, e.newAccess, e.changes])).toEqual([
      ['added', undefined, 'paid', undefined],
      ['updated', 'paid', 'paid', ['links']],
      ['updated', 'paid', 'open', ['doi']],
      ['updated', 'open', 'free', ['links', 'doi']],
      ['updated', 'free', 'free', ['doi']],
      ['updated', 'free', 'free', ['links', 'doi']],
    ]);
    expect(dump()[0]).toMatchObject({ doi: '10.1234/flags', accessType: 'free', vor: pdf('10.1234/flags') });
  });

  test('all platforms of a DOI are one range read, and do not leak into a DOI that extends it', () => {
    store.applyFilesSync([file([{ doi: '10.1234/a', accessType: 'paid' }], { platform: 'beta' })]);
    store.applyFilesSync([
      file(
        [
          { doi: '10.1234/a', accessType: 'open' },
          { doi: '10.1234/ab', accessType: 'free' },
        ],
        { platform: 'acme' },
      ),
    ]);
    expect(store.holdingsOf('10.1234/a').map((h) => h.platform)).toEqual(['acme', 'beta']);
    expect(store.holdingsOf('10.1234/ab').map((h) => h.platform)).toEqual(['acme']);
    expect(dump({ platform: 'beta' }).map((l) => l.doi)).toEqual(['10.1234/a']);
    expect(dump({ doiKey: '10.1234/a' }).map((l) => l.platform)).toEqual(['acme', 'beta']);
  });

  test('dump is sorted by DOI key then platform', () => {
    store.applyFilesSync([file([{ doi: '10.1234/b' }, { doi: '10.1234/a' }], { platform: 'beta' })]);
    store.applyFilesSync([file([{ doi: '10.1234/B' }, { doi: '10.1234/c' }], { platform: 'acme' })]);
    expect(dump().map((l) => `${l.doi}@${l.platform}`)).toEqual([
      '10.1234/a@beta',
      '10.1234/B@acme',
      '10.1234/b@beta',
      '10.1234/c@acme',
    ]);
  });

  test('live counts per platform follow adds and removals', () => {
    store.applyFilesSync([file([{ doi: '10.1234/1' }, { doi: '10.1234/2' }, { doi: '10.1234/3' }])]);
    store.applyFilesSync([
      file([
        { doi: '10.1234/2', deleted: true },
        { doi: '10.1234/9', deleted: true },
      ]),
    ]);
    expect(store.liveCounts()).toEqual({ acme: 2 });
  });
});

describe('ledger', () => {
  test('the same file identity applied twice is a no-op the second time', () => {
    const f = file([{ doi: '10.1234/once', accessType: 'paid' }]);
    expect(store.applyFilesSync([f])[0]!.status).toBe('applied');
    expect(store.applyFilesSync([{ ...f, lastModified: f.lastModified + 10 }])[0]!.status).toBe('duplicate');
    expect(store.holdingsOf('10.1234/once')[0]!.events).toHaveLength(1);
  });

  test('the same key with other content is a conflict, not applied, and listed as a failure', () => {
    const f = file([{ doi: '10.1234/first', accessType: 'paid' }]);
    store.applyFilesSync([f]);
    const other = { ...file([{ doi: '10.1234/second', accessType: 'open' }]), key: f.key, hash: 'other-hash' };
    const [r] = store.applyFilesSync([other]);
    expect(r!.status).toBe('conflict');
    expect(dump().map((l) => l.doi)).toEqual(['10.1234/first']);
    expect([...store.failures()].map((x) => x.kind)).toEqual(['conflict']);
  });

  test('a file applied records counts, rejected lines and timings in its ledger entry', () => {
    const p = parseDepositText(Buffer.from('{"doi":"10.1234/ok"}\n{"doi":"nope"}\n'));
    if ('code' in p) throw new Error('unexpected');
    const f = { ...file([]), parsed: p };
    store.applyFilesSync([f]);
    const entry = store.fileEntry(f.key)!;
    expect(entry.outcome).toBe('applied');
    expect(entry.counts).toMatchObject({ records: 2, added: 1, rejected: 1 });
    expect(entry.rejectedLines![0]).toMatchObject({ line: 2, path: '/doi', code: 'INVALID_DOI' });
    expect(entry.timings!.applyMs).toBeGreaterThanOrEqual(0);
  });

  test('several files in one transaction each get their own ledger entry and sequence number', () => {
    const a = file([{ doi: '10.1234/q1' }]);
    const b = file([{ doi: '10.1234/q1', accessType: 'open' }]);
    const rs = store.applyFilesSync([a, b]);
    expect(rs.map((r) => r.status)).toEqual(['applied', 'applied']);
    expect(store.fileEntry(a.key)!.seq).toBe(1);
    expect(store.fileEntry(b.key)!.seq).toBe(2);
    expect(dump()[0]!.accessType).toBe('open');
  });

  test('a failure part-way through a batch leaves nothing of it: records and ledger entries commit together', () => {
    const good = file([{ doi: '10.1234/before' }]);
    const broken = file([{ doi: '10.1234/ok-first' }]);
    // a key LMDB refuses (over its ~2 KB key limit) makes the put throw after earlier puts of the batch
    broken.parsed.records.push({
      line: 2,
      key: `10.1234/${'x'.repeat(3000)}`,
      record: { doi: `10.1234/${'x'.repeat(3000)}` },
    });
    expect(() => store.applyFilesSync([good, broken])).toThrow();
    expect(dump()).toEqual([]);
    expect(store.fileEntry(good.key)).toBeUndefined();
    expect(store.fileEntry(broken.key)).toBeUndefined();
    expect(store.applyFilesSync([good])[0]!.status).toBe('applied');
  });

  test('a quarantined file never replaces an applied entry', async () => {
    const f = file([{ doi: '10.1234/keep' }]);
    store.applyFilesSync([f]);
    await store.quarantineFile({ key: f.key, size: 1, hash: 'x', lastModified: 1 }, fault('GZIP_CORRUPT', 'm'), {
      tries: 1,
    });
    expect(store.fileEntry(f.key)!.outcome).toBe('applied');
  });
});

describe('store file', () => {
  test('is a real LMDB file on disk that survives a reopen', async () => {
    store.applyFilesSync([file([{ doi: '10.1234/persist', accessType: 'free' }])]);
    await store.close();
    expect(statSync(`${dir.path}/production/data.mdb`).size).toBeGreaterThan(0);
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    expect(dump().map((l) => l.doi)).toEqual(['10.1234/persist']);
  });

  test('opening a store of another schema version fails with a clear message', async () => {
    await store.close();
    // as a later program version would have written it
    const env = open({ path: `${dir.path}/production/data.mdb`, noSubdir: true, maxDbs: 12 });
    await env.openDB({ name: 'meta', encoding: 'msgpack' }).put(META.schemaVersion, SCHEMA_VERSION + 1);
    await env.close();
    expect(() => Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 })).toThrow(
      /schema version 3; this program reads version 2/,
    );
    store = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  });

  test('a version-1 store (no change flags) is read as it is, and marked version 2 when opened for writing', async () => {
    store.applyFilesSync([file([{ doi: '10.1234/v1', accessType: 'paid' }], { time: 1_000 })]);
    await store.close();
    const env = open({ path: `${dir.path}/production/data.mdb`, noSubdir: true, maxDbs: 12 });
    const meta = env.openDB({ name: 'meta', encoding: 'msgpack' });
    await meta.put(META.schemaVersion, 1);
    const readOnly = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30, readOnly: true });
    expect([...readOnly.liveHoldings()].map((h) => h.state.accessType)).toEqual(['paid']);
    await readOnly.close();
    expect(meta.get(META.schemaVersion)).toBe(1);
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    await Bun.sleep(1); // lmdb-js renews a read snapshot when the event loop turns
    expect(meta.get(META.schemaVersion)).toBe(2);
    await env.close();
  });

  test('a store read-only without a table an older program did not make: its page figures count the tables it has', async () => {
    await store.close();
    const path = `${dir.path}/older/data.mdb`;
    mkdirSync(`${dir.path}/older`, { recursive: true });
    const env = open({ path, noSubdir: true, maxDbs: 12 });
    for (const name of ['holdings', 'updates', 'files', 'conflicts', 'fileSeqs', 'importScratch']) env.openDB({ name });
    await env.openDB({ name: 'meta', encoding: 'msgpack' }).put(META.schemaVersion, 1);
    await env.close();
    const older = Store.open(dir.path, 'older' as EnvName, { mapSizeBytes: 1 << 30, readOnly: true });
    expect(older.pageFigures().usedPages).toBeGreaterThan(0);
    await older.close();
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  });

  test('production and staging are separate environments', async () => {
    const staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
    staging.applyFilesSync([file([{ doi: '10.1234/trial' }])]);
    expect(dump()).toHaveLength(0);
    expect([...staging.liveHoldings()].map((h) => dumpLine(staging.env, h)).map((l) => [l.env, l.doi])).toEqual([
      ['staging', '10.1234/trial'],
    ]);
    await staging.close();
  });
});
