import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { JsonBytes } from '../../../src/bytes/index.ts';
import { dumpLine, writeDumpLines } from '../../../src/cli/dump-line.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded, tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';

/**
 * The fast paths write JSON from stored bytes (holding-json.ts); the general paths decode the holding and call
 * JSON.stringify. Held together here byte for byte, over holdings with every kind of awkward text.
 */

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Text a URL or DOI may carry: quotes, backslashes, every control character, non-ASCII, astral characters. */
function awkward(rand: () => number, n: number): string {
  const pool = [
    '"',
    '\\',
    '/',
    'é',
    '漢',
    '😀',
    '\u2028',
    '\ufeff',
    ' ',
    '\u007f',
    'a',
    'Z',
    '%22',
    ...Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)),
  ];
  let s = '';
  for (let i = 0; i < n; i++) s += pool[Math.floor(rand() * pool.length)];
  return s;
}

describe('JsonBytes', () => {
  test('a string literal is escaped exactly as JSON.stringify escapes it', () => {
    const rand = seeded(3);
    const samples = [
      Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join(''),
      '',
      'plain',
      ...Array.from({ length: 300 }, () => awkward(rand, 1 + Math.floor(rand() * 20))),
    ];
    for (const s of samples) {
      const out = new JsonBytes();
      const b = encoder.encode(s);
      out.quoted(b, 0, b.length);
      expect(decoder.decode(out.buf.subarray(0, out.pos))).toBe(JSON.stringify(s));
    }
  });

  test('it grows past its first buffer and keeps what it held', () => {
    const out = new JsonBytes();
    const big = 'x"'.repeat(50_000);
    const b = encoder.encode(big);
    out.ascii('[');
    out.quoted(b, 0, b.length);
    out.ascii(']');
    expect(decoder.decode(out.buf.subarray(0, out.pos))).toBe(JSON.stringify([big]));
  });
});

describe('stored holdings read in place', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;

  beforeAll(() => {
    dir = tempDir();
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    const rand = seeded(19);
    const access = ['paid', 'open', 'free', 'permFree', undefined];
    const types = ['application/pdf', 'text/html', 'application/epub+zip', 'other', undefined];
    for (let f = 0; f < 40; f++) {
      const platform = ['acme', 'beta', 'core'][f % 3]!;
      const lines = Array.from({ length: 1 + Math.floor(rand() * 25) }, () => {
        const n = Math.floor(rand() * 40);
        // the same DOI in other spellings (its key differs from the deposited DOI), some non-ASCII
        const doi = [`10.1234/doc.${n}`, `10.1234/DOC.${n}`, `10.1234/Doc.${n}é`, `10.1234/x"${n}\\`][
          Math.floor(rand() * 4)
        ]!;
        if (rand() < 0.15) return { doi, deleted: true };
        const a = access[Math.floor(rand() * access.length)];
        const vor = Array.from({ length: Math.floor(rand() * 4) }, () => {
          const where = rand();
          // the DOI at the end, in the middle, or not in the URL (the codec stores each differently)
          // (text after the DOI starting with U+FEFF: a decoder that drops a leading BOM would lose it)
          const url =
            where < 0.3
              ? `https://h.example/${doi}`
              : where < 0.4
                ? `https://h.example/${doi}\ufeff${awkward(rand, 2)}`
                : where < 0.7
                  ? `https://h.example/${awkward(rand, 3)}${doi}/${awkward(rand, 4)}`
                  : `https://h.example/${awkward(rand, 8)}`;
          const t = types[Math.floor(rand() * types.length)];
          return t ? { url, contentType: t } : { url };
        });
        return { doi, ...(a ? { accessType: a } : {}), ...(vor.length ? { vor } : {}) };
      });
      store.applyFilesSync([preparedFile(lines, { platform })]);
    }
  });
  afterAll(async () => {
    await store.close();
    dir.remove();
  });

  test('each live holding: its DOI, access type, updated time and vor JSON are those the decoded holding gives', () => {
    const general = [...store.liveHoldings()];
    const fast: { doi: string; access: string; updated: number; vor: string | undefined; platform: string }[] = [];
    for (const h of store.storedHoldings()) {
      let vor: string | undefined;
      if (h.vorCount > 0) {
        const out = new JsonBytes();
        h.writeVor(out);
        vor = decoder.decode(out.buf.subarray(0, out.pos));
      }
      fast.push({
        doi: decoder.decode(h.doiBytes.subarray(h.doiStart, h.doiEnd)),
        access: h.accessJson,
        updated: h.updated,
        vor,
        platform: decoder.decode(h.key.subarray(h.platformStart)),
      });
    }
    expect(general.length).toBeGreaterThan(60);
    expect(general.some((h) => h.state.doi !== h.doiKey)).toBe(true); // spellings other than the key were stored
    expect(general.some((h) => h.state.vor?.some((v) => v.url.includes(`${h.state.doi}\ufeff`)))).toBe(true); // a BOM read back whole
    expect(fast).toEqual(
      general.map((h) => ({
        doi: h.state.doi,
        access: h.state.accessType ? `"${h.state.accessType}"` : '',
        updated: h.updated,
        vor: h.state.vor && JSON.stringify(h.state.vor),
        platform: h.platform,
      })),
    );
  });

  test('--dump lines written from the bytes are the JSON.stringify lines, byte for byte, with and without filters', () => {
    const filters = [
      {},
      { platform: 'beta' },
      { doiKey: '10.1234/doc.7' },
      { doiKey: '10.1234/doc.7', platform: 'acme' },
      { platform: 'nobody' },
    ];
    for (const filter of filters) {
      const chunks: string[] = [];
      let lines = 0;
      writeDumpLines(
        store,
        filter,
        (chunk) => chunks.push(decoder.decode(chunk)),
        () => lines++,
      );
      const general = [...store.liveHoldings(filter)].map((h) => `${JSON.stringify(dumpLine(store.env, h))}\n`);
      expect(chunks.join('')).toBe(general.join(''));
      expect(lines).toBe(general.length);
    }
  });
});
