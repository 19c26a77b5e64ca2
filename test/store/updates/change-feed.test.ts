import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { META, openEnvironment } from '../../../src/store/environment/environment.ts';
import { decodeCursor, encodeCursor, type FeedCursor, Store } from '../../../src/store/index.ts';
import { prefixLengthFor } from '../../../src/store/updates/index.ts';
import { importUpdates } from '../../../src/updates/index.ts';
import { tempDir } from '../../support/fixtures.ts';
import { SAMPLE } from '../../support/rw-sample.ts';

/** The change feed's store side (src/store/updates/change-feed.ts): cursors, a store made before the feed, the prefix length. */

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir('feed-store');
});
afterAll(() => dir.remove());

const OPTS = { mapSizeBytes: 256 * 1024 ** 2 };
const importCsv = (stores: Store[], text: string) =>
  importUpdates(stores, 'retraction-watch-csv', [Buffer.from(text)] as unknown as AsyncIterable<Uint8Array>);

/** Every page of the feed from the start, as [items, last cursor]. */
function fullSync(store: Store): { items: string[]; next: string } {
  const items: string[] = [];
  let after: FeedCursor | undefined;
  for (;;) {
    const page = store.changeFeed.changesAfter(after, 500);
    if ('refused' in page) throw new Error(page.message);
    items.push(...page.items);
    after = page.next;
    if (!page.more) return { items, next: encodeCursor(page.next) };
  }
}

describe('the change feed in the store', () => {
  test('cursors: what is given out reads back; anything else is refused', () => {
    for (const c of [
      { commit: 12, seq: 3456, lineage: '0123456789abcdef', began: 0 },
      { commit: 12, seq: 3456, lineage: '0123456789abcdef', began: 12 },
      { commit: 12, seq: 3456, lineage: '0123456789abcdef', began: 7 },
      { commit: 0, seq: 0, lineage: '0'.repeat(16), began: 0 },
    ])
      expect(decodeCursor(encodeCursor(c))).toEqual(c);
    // the short form (the tip's, and every cursor of the program before `began`) reads as begun at 0
    expect(
      Buffer.from(
        encodeCursor({ commit: 12, seq: 3456, lineage: '0123456789abcdef', began: 0 }),
        'base64url',
      ).toString(),
    ).toBe('1.12.3456.0123456789abcdef');
    expect(decodeCursor(Buffer.from('1.12.3456.0123456789abcdef').toString('base64url'))).toEqual({
      commit: 12,
      seq: 3456,
      lineage: '0123456789abcdef',
      began: 0,
    });
    for (const bad of [
      '',
      'a b',
      Buffer.from('2.1.1.0123456789abcdef').toString('base64url'),
      Buffer.from('1.0.5.0123456789abcdef').toString('base64url'),
      Buffer.from('1.1.1.0123').toString('base64url'),
      Buffer.from('2.1.1.0123456789abcdef.').toString('base64url'),
      Buffer.from('2.1.1.0123456789abcdef.99999999999').toString('base64url'),
      'x'.repeat(81),
    ])
      expect(decodeCursor(bad)).toBeUndefined();
  });

  test('a store made before the feed gets one at open: its works in key order, the same on two replicas', async () => {
    const paths = ['old-a', 'old-b'].map((n) => join(dir.path, n));
    for (const p of paths) {
      const store = Store.open(p, 'production', OPTS);
      await importCsv([store], SAMPLE);
      await store.close();
      // as a program before the feed left it: no head, no rows, no place in the feed
      const dbs = openEnvironment(join(p, 'production'), OPTS);
      dbs.root.transactionSync(() => {
        dbs.meta.removeSync(META.changeFeed);
        dbs.changes.clearSync();
        dbs.changeLineage.clearSync();
        for (const { key, value } of dbs.updates.getRange())
          dbs.updates.putSync(key, { ...value, changeSeq: undefined });
      });
      await dbs.root.close();
    }
    const [a, b] = paths.map((p) => Store.open(p, 'production', OPTS)) as [Store, Store];
    const fromA = fullSync(a);
    expect(fromA).toEqual(fullSync(b));
    const dois = fromA.items.map((i) => (JSON.parse(i) as { doi: string }).doi.toLowerCase());
    expect(dois).toEqual([...dois].sort());
    expect(dois.length).toBe(a.updatesIndex.size);
    expect(a.changeFeed.head()).toMatchObject({ commit: 1, seq: dois.length });
    await Promise.all([a.close(), b.close()]);
  });

  test('an import that changes nothing served takes no sequence number and no commit', async () => {
    const store = Store.open(join(dir.path, 'same'), 'production', OPTS);
    await importCsv([store], SAMPLE);
    const head = store.changeFeed.head();
    await importCsv([store], SAMPLE);
    expect(store.changeFeed.head()).toEqual(head);
    // the empty poll's fast path (isTip) holds for exactly the cursor the general path ends a sync with
    const { next } = fullSync(store);
    expect(store.changeFeed.isTip(next)).toBe(true);
    expect(store.changeFeed.changesAfter(decodeCursor(next), 10)).toEqual({
      items: [],
      next: decodeCursor(next)!,
      more: false,
    });
    const page = store.changeFeed.changesAfter(undefined, 1);
    if ('refused' in page) throw new Error(page.message);
    expect(store.changeFeed.isTip(encodeCursor(page.next))).toBe(false);
    // a tip moved by another process (here a raw write, which this process's feed writer did not make) is read
    // again within the fast path's freshness bound (25 ms); until then the old tip can only answer an empty page
    const other = openEnvironment(join(dir.path, 'same', 'production'), OPTS);
    const moved = encodeCursor({ ...decodeCursor(next)!, seq: decodeCursor(next)!.seq + 1 });
    other.meta.putSync(META.changeFeedTip, moved);
    await Bun.sleep(60);
    expect([store.changeFeed.isTip(next), store.changeFeed.isTip(moved)]).toEqual([false, true]);
    other.meta.putSync(META.changeFeedTip, next);
    await store.close();
  });

  test('a store an older program pruned (lineage entries removed, no withdrawal mark) still gives whole full syncs; cursors from before its withdrawal answer 410', async () => {
    const p = join(dir.path, 'pruned-before');
    const retract = (w: string, n: string) => ({
      items: [
        {
          DOI: n,
          'update-to': [{ DOI: w, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2021, 2, 3]] } }],
        },
      ],
    });
    const crossref = (store: Store, json: unknown) =>
      importUpdates([store], 'crossref-json', [
        Buffer.from(JSON.stringify(json)),
      ] as unknown as AsyncIterable<Uint8Array>);
    let store = Store.open(p, 'production', { ...OPTS, changeFeedKeepMs: 0 });
    await importCsv([store], SAMPLE); // commit 1
    const old = store.changeFeed.changesAfter(undefined, 1);
    if ('refused' in old) throw new Error(old.message);
    await crossref(store, retract('10.5555/q.1', '10.5555/qn.1')); // commit 2
    await crossref(store, { items: [{ DOI: '10.5555/q.1', 'updated-by': [] }] }); // commit 3: withdrawn, pruned
    await crossref(store, retract('10.5555/q.2', '10.5555/qn.2')); // commit 4
    const whole = fullSync(store).items;
    await store.close();
    // a replica with the same history that this program pruned: every lineage entry kept
    cpSync(p, `${p}-b`, { recursive: true });
    // as the program before 2026-11-24 left it: the entries of pruned commits gone but the newest, no withdrawal mark
    const dbs = openEnvironment(join(p, 'production'), OPTS);
    dbs.root.transactionSync(() => {
      const head = dbs.meta.get(META.changeFeed) as Record<string, number>;
      expect(head).toMatchObject({ commit: 4, prunedCommit: 4, withdrawnCommit: 3 });
      for (let c = 1; c < head.prunedCommit!; c++) dbs.changeLineage.removeSync(c);
      const { withdrawnCommit: _c, withdrawnThrough: _t, ...older } = head;
      dbs.meta.putSync(META.changeFeed, older);
    });
    await dbs.root.close();
    store = Store.open(p, 'production', OPTS);
    const replica = Store.open(`${p}-b`, 'production', OPTS);
    // a full sync in pages of one row, from the two in turn: every page's cursor names a commit whose lineage both hold
    const items: string[] = [];
    let after: FeedCursor | undefined;
    for (let i = 0; ; i++) {
      const page = (i % 2 === 0 ? store : replica).changeFeed.changesAfter(after, 1);
      if ('refused' in page) throw new Error(page.message);
      items.push(...page.items);
      after = page.next;
      if (!page.more) break;
    }
    expect(items).toEqual(whole);
    // a cursor given out before the withdrawal: 410 (by the older head's mark, prunedThrough)
    expect(store.changeFeed.changesAfter(old.next, 10)).toMatchObject({ refused: 'expired' });
    await Promise.all([store.close(), replica.close()]);
  });

  test('no client keeps a pruned withdrawal without a 410: a sync across a replica behind, a cursor of the older program, marks an older program left behind', async () => {
    const retract = (w: string, n: string) => ({
      DOI: n,
      'update-to': [{ DOI: w, type: 'retraction', source: 'publisher', updated: { 'date-parts': [[2021, 2, 3]] } }],
    });
    const crossref = (stores: Store[], json: unknown) =>
      importUpdates(stores, 'crossref-json', [
        Buffer.from(JSON.stringify(json)),
      ] as unknown as AsyncIterable<Uint8Array>);
    const open = (name: string, keepMs: number) =>
      Store.open(join(dir.path, name), 'production', { ...OPTS, changeFeedKeepMs: keepMs });
    const withdraw = { items: [{ DOI: '10.5555/w.1', 'updated-by': [] }] };
    const page = (store: Store, after: ReturnType<typeof decodeCursor>) => {
      const p = store.changeFeed.changesAfter(after, 1);
      if ('refused' in p) return p;
      return { ...p, dois: p.items.map((i) => (JSON.parse(i) as { doi: string }).doi) };
    };

    // a full sync begun on A (w.1 already withdrawn there) goes on at B, one commit behind, which still serves w.1
    const [a, b] = [open('behind-a', 0), open('behind-b', 0)];
    await crossref([a, b], {
      items: [
        retract('10.5555/a.1', '10.5555/an.1'),
        retract('10.5555/w.1', '10.5555/wn.1'),
        retract('10.5555/z.1', '10.5555/zn.1'),
      ],
    });
    await crossref([a], withdraw);
    const first = page(a, undefined);
    if ('refused' in first) throw new Error(first.message);
    expect(first.dois).toEqual(['10.5555/a.1']);
    // B is behind the head the cursor names: an empty page, the cursor back, until it has caught up
    expect(page(b, first.next)).toMatchObject({ items: [], next: first.next, more: false });
    await crossref([b], withdraw); // B catches up; the withdrawal pruned at once
    const second = page(b, first.next);
    if ('refused' in second) throw new Error(second.message);
    expect(second.dois).toEqual(['10.5555/z.1']); // never w.1, served with updates
    await Promise.all([a.close(), b.close()]);

    // the older program's cursor inside a commit (short form, the row's commit): judged as begun at 0
    const c = open('legacy', 1e12);
    await crossref([c], { items: [retract('10.5555/w.1', '10.5555/wn.1')] }); // commit 1: the client holds w.1
    // commit 2: a.2 added, then w.1 withdrawn; the older program's cursor after a page of one row names a.2's commit
    await crossref([c], { items: [retract('10.5555/a.2', '10.5555/an.2'), { DOI: '10.5555/w.1', 'updated-by': [] }] });
    await c.close();
    const dbs = openEnvironment(join(dir.path, 'legacy', 'production'), OPTS);
    const entry2 = dbs.changeLineage.get(2) as { hash: string; firstSeq: number; lastSeq: number };
    expect(entry2.lastSeq).toBe(entry2.firstSeq + 1);
    await dbs.root.close();
    const older = decodeCursor(Buffer.from(`1.2.${entry2.firstSeq}.${entry2.hash.slice(0, 16)}`).toString('base64url'));
    const pruning = open('legacy', 0);
    await crossref([pruning], { items: [retract('10.5555/b.3', '10.5555/bn.3')] }); // commit 3: prunes commits 1 to 3
    expect(pruning.changeFeed.changesAfter(older, 10)).toMatchObject({ refused: 'expired' });

    // an older program pruned after this one (its head copied with the marks unchanged): prunedCommit and
    // prunedThrough stand for what it may have removed
    const tip = pruning.changeFeed.changesAfter(undefined, 100);
    if ('refused' in tip) throw new Error(tip.message);
    await crossref([pruning], { items: [retract('10.5555/w.1', '10.5555/wn.4')] }); // commit 4: w.1 again, then withdrawn
    const mid = pruning.changeFeed.changesAfter(tip.next, 100);
    if ('refused' in mid) throw new Error(mid.message);
    await crossref([pruning], withdraw); // commit 5, pruned
    await pruning.close();
    const raw = openEnvironment(join(dir.path, 'legacy', 'production'), OPTS);
    raw.root.transactionSync(() => {
      const head = raw.meta.get(META.changeFeed) as Record<string, number>;
      // as if the marks had stayed at commit 4 while the older program pruned commit 5
      raw.meta.putSync(META.changeFeed, { ...head, withdrawnCommit: 2, withdrawnThrough: 0, withdrawnAsOf: 4 });
    });
    await raw.root.close();
    const reopened = Store.open(join(dir.path, 'legacy'), 'production', OPTS);
    expect(reopened.changeFeed.changesAfter(mid.next, 10)).toMatchObject({ refused: 'expired' });
    await reopened.close();
  });

  test('the prefix length keeps at least 4 works with updates per prefix on average', () => {
    expect(prefixLengthFor(0)).toBe(1);
    expect(prefixLengthFor(3_000)).toBe(2);
    expect(prefixLengthFor(65_000)).toBe(3);
    expect(prefixLengthFor(300_000)).toBe(4);
    expect(prefixLengthFor(16 ** 5 * 4)).toBe(5);
    expect(prefixLengthFor(16 ** 5 * 4 - 1)).toBe(4);
  });
});
