import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MAX_DOIS_PER_REQUEST } from '../../../src/doi/index.ts';
import type { App } from '../../../src/http/index.ts';
import { UpdatesRequest } from '../../../src/http/index.ts';
import { answerParsed, answerPlain } from '../../../src/http/routes/updates-route.ts';
import { scanPlainBody } from '../../../src/http/wire/plain-body.ts';
import { Store, UpdatesTable } from '../../../src/store/index.ts';
import { seeded as prng, tempDir } from '../../support/fixtures.ts';
import { importSample, makeApp, post } from '../http-support.ts';

/**
 * The Updates API answers a body in the plain shape straight from its bytes (src/http/wire/plain-body.ts) and parses
 * any other body in full. These tests hold the two paths to one meaning: the scanner recognises a body only when
 * JSON.parse and the request schema would accept it with exactly the strings it found, and both paths write the
 * same reply, byte for byte.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const checkRequest = TypeCompiler.Compile(UpdatesRequest);

function scan(body: string | Uint8Array): string[] | undefined {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const spans = new Int32Array(2 * MAX_DOIS_PER_REQUEST);
  const n = scanPlainBody(bytes, spans, MAX_DOIS_PER_REQUEST);
  if (n < 0) return undefined;
  return Array.from({ length: n }, (_, i) => decoder.decode(bytes.subarray(spans[2 * i], spans[2 * i + 1])));
}

/** What the general path makes of a body: its DOI list when JSON.parse and the schema accept it. */
function parsedDois(bytes: Uint8Array): string[] | undefined {
  try {
    const value = JSON.parse(decoder.decode(bytes)) as unknown;
    return checkRequest.Check(value) ? value.dois : undefined;
  } catch {
    return undefined;
  }
}

describe('scanPlainBody recognises the plain shape', () => {
  const accepted: [string, string[]][] = [
    ['{"dois":["10.1234/abc"]}', ['10.1234/abc']],
    ['{"dois":["10.1234/a","10.1234/b","10.1234/a"]}', ['10.1234/a', '10.1234/b', '10.1234/a']],
    [' \t\r\n{ "dois" :\n[ "10.1234/a" ,\t"doi:10.1234/B" ] }\n', ['10.1234/a', 'doi:10.1234/B']],
    [
      '{"dois":["not a doi"," 10.1234/x ","https://doi.org/10.1234/X",""]}',
      ['not a doi', ' 10.1234/x ', 'https://doi.org/10.1234/X', ''],
    ],
    ['{"dois":["~!#$%&\'()*+,-./:;<=>?@[]^_`{|}"]}', ["~!#$%&'()*+,-./:;<=>?@[]^_`{|}"]],
  ];
  for (const [body, dois] of accepted)
    test(`${JSON.stringify(body).slice(0, 60)}: ${dois.length} DOIs`, () => {
      expect(scan(body)).toEqual(dois);
      expect(parsedDois(encoder.encode(body))).toEqual(dois);
    });

  test('exactly 100 DOIs are recognised, 101 are not', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `10.1234/${i}`);
    expect(scan(JSON.stringify({ dois: list(100) }))).toEqual(list(100));
    expect(scan(JSON.stringify({ dois: list(101) }))).toBeUndefined();
  });

  // each is left to the general path, which accepts the valid ones and answers the others with a 400
  const declined = [
    '',
    '{}',
    '[]',
    '{"dois":[]}',
    '{"dois":"10.1234/a"}',
    '{"dois":[1]}',
    '{"dois":[null]}',
    '{"dois":[["10.1234/a"]]}',
    '{"dois":["10.1234/a",]}',
    '{"dois":[,"10.1234/a"]}',
    '{"dois":["10.1234/a""10.1234/b"]}',
    '{"dois":["10.1234/a"]',
    '{"dois":["10.1234/a"]}}',
    '{"dois":["10.1234/a"]} x',
    '{"dois":["10.1234/a"],}',
    '{"dois":["10.1234/a"],"x":1}',
    '{"x":1,"dois":["10.1234/a"]}',
    '{"dois":["10.1234/a"],"dois":["10.1234/b"]}',
    '{"DOIS":["10.1234/a"]}',
    "{'dois':['10.1234/a']}",
    '{dois:["10.1234/a"]}',
    '{"dois":["10.1234/a]}',
    '{"dois":["10.1234/\\"a"]}',
    '{"dois":["10.1234\\/a"]}',
    '{"dois":["\\u0031\\u0030.1234/a"]}',
    '{"dois":["10.1234/é"]}',
    '{"dois":["10.1234/a\tb"]}',
    '{"dois":["10.1234/a\u007f"]}',
    '\ufeff{"dois":["10.1234/a"]}',
    '{"dois":["10.1234/a"]}\u00a0',
    '{"dois"\u000b:["10.1234/a"]}',
  ];
  for (const body of declined)
    test(`declines ${JSON.stringify(body).slice(0, 60)}`, () => {
      expect(scan(body)).toBeUndefined();
    });

  test('fuzz: whatever it recognises, JSON.parse and the schema accept with the same strings', () => {
    const rand = prng(20261123);
    const alphabet = [
      '"',
      '\\',
      ',',
      '[',
      ']',
      '{',
      '}',
      ':',
      ' ',
      '\n',
      'd',
      'o',
      'i',
      's',
      '1',
      '0',
      '.',
      '/',
      'é',
      '\u0000',
      'u',
      'A',
    ];
    let recognised = 0;
    for (let round = 0; round < 20_000; round++) {
      const dois = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) =>
        rand() < 0.2 ? `doi:10.5555/X${i}` : `10.5555/x${i}`,
      );
      let body = JSON.stringify({ dois }, null, rand() < 0.3 ? 1 : undefined);
      for (let m = Math.floor(rand() * 3); m > 0; m--) {
        const at = Math.floor(rand() * (body.length + 1));
        const ch = alphabet[Math.floor(rand() * alphabet.length)]!;
        const op = rand();
        body =
          op < 0.4
            ? body.slice(0, at) + ch + body.slice(at)
            : op < 0.7
              ? body.slice(0, at) + body.slice(at + 1)
              : body.slice(0, at) + ch + body.slice(at + 1);
      }
      const bytes = encoder.encode(body);
      const found = scan(bytes);
      if (found === undefined) continue;
      recognised++;
      expect({ body, dois: parsedDois(bytes) }).toEqual({ body, dois: found });
    }
    // the mutations leave many bodies plain (unchanged, or changed inside a DOI): the property was exercised
    expect(recognised).toBeGreaterThan(3_000);
  });
});

describe('both paths write the same reply', () => {
  const rand = prng(77);
  const withUpdates = ['10.1234/abc', '10.1002/anie.2025', '10.5555/a"quote', '10.5555/é', '10.5555/back\\slash'];
  const table = UpdatesTable.of(new Map(withUpdates.map((k, i) => [k, encoder.encode(`[{"n":${i}}]`)])));
  const forms = [
    () => '10.1234/abc',
    () => '10.1234/ABC',
    () => 'doi:10.1002/ANIE.2025',
    () => 'https://doi.org/10.1234/abc',
    () => ' 10.1234/abc ',
    () => `10.${1000 + Math.floor(rand() * 9000)}/plain-${Math.floor(rand() * 1e6)}`,
    () => '10.123/too-short',
    () => '10.1234/',
    () => 'not a doi',
    () => '',
    () => '10.1234/a b',
    () => `10.1234/${'x'.repeat(1100)}`,
    () => '10.5555/a"quote',
    () => '10.5555/É',
    () => '10.5555/back\\slash',
    () => '10.1234/\u2028',
  ];
  const spans = new Int32Array(2 * MAX_DOIS_PER_REQUEST);

  test('random lists of every DOI form: the byte path (where it applies) equals the parsed path', () => {
    let plainBodies = 0;
    for (let round = 0; round < 3_000; round++) {
      // half the rounds use only forms a plain body can carry (no quote, backslash or non-ASCII)
      const pool = round % 2 === 0 ? forms : forms.slice(0, 12);
      const dois = Array.from({ length: 1 + Math.floor(rand() * MAX_DOIS_PER_REQUEST) }, () =>
        pool[Math.floor(rand() * pool.length)]!(),
      );
      const body = encoder.encode(JSON.stringify({ dois }));
      const general = answerParsed(dois, table).view().slice();
      JSON.parse(decoder.decode(general)); // valid JSON
      const n = scanPlainBody(body, spans, MAX_DOIS_PER_REQUEST);
      if (n < 0) continue;
      plainBodies++;
      expect(decoder.decode(answerPlain(body, spans, n, table).view())).toBe(decoder.decode(general));
    }
    expect(plainBodies).toBeGreaterThan(1_000);
  });
});

describe('through the app: a plain body and the same request written otherwise get one answer', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  let app: App;
  beforeAll(async () => {
    dir = tempDir('doi-holdings-plain-');
    store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
    await importSample([store]);
    app = makeApp({ production: { store } });
  });
  afterAll(async () => {
    await store?.close();
    dir?.remove();
  });

  test("the sample's DOIs in several forms: same status, headers and bytes", async () => {
    const dois = [
      '10.3892/ijo.2017.3871',
      '10.3892/IJO.2017.3871',
      'https://doi.org/10.1007/S12517-021-07389-5',
      '10.1234/none',
      'bad',
      '10.1074/JBC.M204376200',
    ];
    const plain = JSON.stringify({ dois });
    // `\/` means `/` to JSON.parse, and sends the whole body down the general path
    const escaped = plain.replace('10.1234/none', '10.1234\\/none');
    expect(scan(plain)).toEqual(dois);
    expect(scan(escaped)).toBeUndefined();
    const [a, b] = await Promise.all([post(app, '/v2.2/updates', plain), post(app, '/v2.2/updates', escaped)]);
    expect([a.status, a.headers.get('content-type')]).toEqual([b.status, b.headers.get('content-type')]);
    const [ta, tb] = [await a.text(), await b.text()];
    expect(ta).toBe(tb);
    const docs = (JSON.parse(ta) as { documents: { doi: string; statusCode: number; updates: unknown[] }[] }).documents;
    expect(docs.map((d) => [d.doi, d.statusCode, d.updates.length > 0])).toEqual([
      ['10.3892/ijo.2017.3871', 200, true],
      ['10.3892/IJO.2017.3871', 200, true],
      ['https://doi.org/10.1007/S12517-021-07389-5', 200, true],
      ['10.1234/none', 200, false],
      ['bad', 400, false],
      ['10.1074/JBC.M204376200', 200, true],
    ]);
  });
});
