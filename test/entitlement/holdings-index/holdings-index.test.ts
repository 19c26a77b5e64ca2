import { describe, expect, test } from 'bun:test';
import { HoldingsIndex } from '../../../src/entitlement/holdings-index/holdings-index.ts';
import type { IndexedHolding } from '../../../src/entitlement/holdings-index/index-value.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';

const temp = storePerTest();

/** What the index holds, as plain data sorted by DOI key. */
function contents(index: HoldingsIndex): [string, IndexedHolding[]][] {
  const decoder = new TextDecoder();
  return [...index.entries()]
    .map(
      ([k, hs]) =>
        [k, hs.map((h) => ({ ...h, vorJson: h.vorJson && (decoder.decode(h.vorJson) as unknown as Uint8Array) }))] as [
          string,
          IndexedHolding[],
        ],
    )
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** The general path: the same holdings read from the store (every live holding, store order). */
function fromStore(): [string, IndexedHolding[]][] {
  const out = new Map<string, IndexedHolding[]>();
  for (const h of temp.store.liveHoldings()) {
    const open = h.state.accessType !== undefined && h.state.accessType !== 'paid';
    const list = out.get(h.doiKey) ?? [];
    list.push({
      platform: h.platform,
      accessType: h.state.accessType,
      vorJson: open && h.state.vor ? (JSON.stringify(h.state.vor) as unknown as Uint8Array) : undefined,
    });
    out.set(h.doiKey, list);
  }
  return [...out].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe('the entitlement index follows the store', () => {
  test('a DOI held by two platforms lists both in platform order, vor kept only for holdings answered from the deposit', () => {
    const index = new HoldingsIndex(temp.store);
    index.refresh();
    temp.store.applyFilesSync([
      preparedFile([{ doi: '10.1234/X', accessType: 'paid', vor: [{ url: 'https://z.example/x.pdf' }] }], {
        platform: 'zeta',
      }),
    ]);
    temp.store.applyFilesSync([
      preparedFile(
        [
          {
            doi: '10.1234/x',
            accessType: 'open',
            vor: [{ url: 'https://a.example/x.pdf', contentType: 'application/pdf' }],
          },
        ],
        { platform: 'alpha' },
      ),
    ]);
    expect(index.holdingsOfKey('10.1234/x')!).toEqual([
      {
        platform: 'alpha',
        accessType: 'open',
        vorJson: new TextEncoder().encode('[{"url":"https://a.example/x.pdf","contentType":"application/pdf"}]'),
      },
      { platform: 'zeta', accessType: 'paid', vorJson: undefined },
    ]);
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/x', deleted: true }], { platform: 'alpha' })]);
    expect(index.holdingsOfKey('10.1234/x')!).toEqual([{ platform: 'zeta', accessType: 'paid', vorJson: undefined }]);
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/x', deleted: true }], { platform: 'zeta' })]);
    expect(index.get('10.1234/x')).toBeUndefined();
    expect(index.size).toBe(0);
  });

  test('after random deposits, changes and removals over several platforms the followed index equals one built from the store', () => {
    const rand = seeded(17);
    const platforms = ['acme', 'beta', 'core', 'delta'];
    const access = ['paid', 'open', 'free', 'permFree', undefined];
    const index = new HoldingsIndex(temp.store);
    index.build();
    for (let f = 0; f < 60; f++) {
      const lines = Array.from({ length: 1 + Math.floor(rand() * 40) }, () => {
        // spelt as the key, in upper case, mixed; some with a character JSON escapes, some not ASCII
        const doi = `10.${1000 + Math.floor(rand() * 3)}/${['doc', 'DOC', 'Doc'][Math.floor(rand() * 3)]}-${Math.floor(rand() * 150)}${rand() < 0.1 ? 'é' : rand() < 0.05 ? '"q' : ''}`;
        if (rand() < 0.15) return { doi, deleted: true };
        const a = access[Math.floor(rand() * access.length)];
        const rec: Record<string, unknown> = { doi };
        if (a) rec.accessType = a;
        if (rand() < 0.7)
          rec.vor = [
            { url: `https://host.example/${doi}/${Math.floor(rand() * 3)}.pdf`, contentType: 'application/pdf' },
            ...(rand() < 0.3 ? [{ url: 'https://h.example/"q"' }] : []),
          ];
        return rec;
      });
      temp.store.applyFilesSync([preparedFile(lines, { platform: platforms[Math.floor(rand() * platforms.length)] })]);
    }
    expect(index.builds).toBe(1);
    expect(index.size).toBeGreaterThan(100);
    expect(contents(index)).toEqual(fromStore());
    const fresh = new HoldingsIndex(temp.store);
    fresh.build();
    expect(contents(fresh)).toEqual(contents(index));
  });

  test('files applied by another process (a gap in apply numbers) make the index rebuild from the store', async () => {
    let clock = 0;
    const index = new HoldingsIndex(temp.store, 250, () => clock);
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/a', accessType: 'open' }])]);
    index.refresh();
    expect(index.get('10.1234/a')).toBeDefined();
    const other = Store.open(temp.dir.path, 'production', { mapSizeBytes: 1 << 30 });
    other.applyFilesSync([
      preparedFile([
        { doi: '10.1234/a', deleted: true },
        { doi: '10.1234/b', accessType: 'paid' },
      ]),
    ]);
    index.refresh();
    expect(index.get('10.1234/a')).toBeDefined(); // re-checked at most every 250 ms
    clock += 250;
    await Bun.sleep(1); // lmdb-js renews its read snapshot when the event loop turns, as between two requests
    index.refresh();
    expect(index.get('10.1234/a')).toBeUndefined();
    expect(index.get('10.1234/B')).toBeDefined();
    expect(index.builds).toBe(2);
    // the next own file after the gap: the index notices the sequence number moved past it and reads the store again
    other.applyFilesSync([preparedFile([{ doi: '10.1234/c', accessType: 'open' }])]);
    await Bun.sleep(1);
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/d', accessType: 'open' }])]);
    expect(index.get('10.1234/c')).toBeDefined();
    expect(index.get('10.1234/d')).toBeDefined();
    expect(index.builds).toBe(3);
    await other.close();
  });

  test('several files applied in one asynchronous transaction (a cold replica batch) are followed in order', async () => {
    const index = new HoldingsIndex(temp.store);
    index.refresh();
    await temp.store.applyFiles([
      preparedFile([
        { doi: '10.1234/q', accessType: 'open' },
        { doi: '10.1234/r', accessType: 'paid' },
      ]),
      preparedFile([
        { doi: '10.1234/q', deleted: true },
        { doi: '10.1234/s', accessType: 'free' },
      ]),
      preparedFile([{ doi: '10.1234/r', accessType: 'permFree' }]),
    ]);
    expect(index.builds).toBe(1);
    expect(contents(index)).toEqual(fromStore());
    expect(index.get('10.1234/q')).toBeUndefined();
    expect(index.holdingsOfKey('10.1234/r')!.map((h) => h.accessType)).toEqual(['permFree']);
  });

  test('a listener that throws neither fails the commit nor keeps the index from hearing; the index heals by a rebuild', () => {
    const index = new HoldingsIndex(temp.store);
    index.refresh();
    const unsubscribe = temp.store.onApplied(() => {
      throw new Error('a broken listener');
    });
    const [status] = temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/t', accessType: 'open' }])]);
    expect(status!.status).toBe('applied');
    expect(index.get('10.1234/t')).toBeDefined();
    unsubscribe();
    // the index itself failing to follow: it marks itself stale and the next use reads the store again
    (index as unknown as { applyFile: () => void }).applyFile = () => {
      throw new Error('cannot follow');
    };
    temp.store.applyFilesSync([preparedFile([{ doi: '10.1234/u', accessType: 'open' }])]);
    expect(index.failures).toBe(1);
    index.refresh();
    expect(index.builds).toBe(2);
    expect(index.get('10.1234/u')).toBeDefined();
  });
});
