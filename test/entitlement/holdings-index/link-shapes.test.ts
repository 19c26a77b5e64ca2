import { expect, test } from 'bun:test';
import { JsonBytes } from '../../../src/bytes/index.ts';
import { LinkShapes } from '../../../src/entitlement/holdings-index/link-shapes.ts';
import { seeded } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { storePerTest } from '../../support/temp-store.ts';

const temp = storePerTest();

const decoder = new TextDecoder();

test('a link set written for a DOI is the stored vor JSON, by native copies and by the loop alike', () => {
  const rand = seeded(3);
  const hosts = ['https://a.example/pdf', 'https://b.example/doi/"quoted"', 'https://c.example/é', 'http://d.example'];
  const tails = ['', '.pdf', '/fulltext', '?x="1"&y=\\2'];
  const types = [undefined, 'application/pdf', 'text/html', 'text/"odd"'];
  const records = Array.from({ length: 600 }, (_, i) => {
    const doi = `10.${1000 + (i % 7)}/doc.${i}`;
    const links = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
      const contentType = types[Math.floor(rand() * types.length)];
      const url = `${hosts[Math.floor(rand() * hosts.length)]}/${doi}${tails[Math.floor(rand() * tails.length)]}`;
      return contentType ? { url, contentType } : { url };
    });
    return { doi, accessType: 'open', vor: links };
  });
  temp.store.applyFilesSync([preparedFile(records)]);
  const expected = new Map([...temp.store.liveHoldings()].map((h) => [h.doiKey, JSON.stringify(h.state.vor)]));

  const native = new LinkShapes();
  const loop = new LinkShapes(undefined, null);
  const a = new JsonBytes(16); // small: the writes must make room as they go
  const b = new JsonBytes(16);
  let written = 0;
  for (const h of temp.store.storedHoldings()) {
    const id = native.idOf(h, 0);
    expect(loop.idOf(h, 0)).toBe(id);
    if (id < 0) continue; // links kept with the DOI: not a set's
    const key = h.key;
    const start = a.pos;
    native.write(a, id, key, 0, h.doiKeyEnd, false);
    loop.write(b, id, key, 0, h.doiKeyEnd, false);
    expect(decoder.decode(a.buf.subarray(start, a.pos))).toBe(
      expected.get(decoder.decode(key.subarray(0, h.doiKeyEnd)))!,
    );
    written++;
  }
  expect(written).toBeGreaterThan(300); // the rest have a URL the store keeps whole (not around the DOI)
  expect(native.size).toBeGreaterThan(20); // many sets, so the pieces' buffer grew
  expect(decoder.decode(b.buf.subarray(0, b.pos))).toBe(decoder.decode(a.buf.subarray(0, a.pos)));
  // a set rebuilt from its parts (the build worker's result) writes the same
  const again = new LinkShapes(native.parts());
  const c = new JsonBytes(16);
  for (let id = 0; id < native.size; id++) again.write(c, id, new TextEncoder().encode('10.1/x'), 0, 6, true);
  const d = new JsonBytes(16);
  for (let id = 0; id < native.size; id++) loop.write(d, id, new TextEncoder().encode('10.1/x'), 0, 6, true);
  expect(decoder.decode(c.buf.subarray(0, c.pos))).toBe(decoder.decode(d.buf.subarray(0, d.pos)));
  expect(decoder.decode(c.buf.subarray(0, c.pos))).toContain('/10.1/X');
});
