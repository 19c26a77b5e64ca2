import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import type { ParsedUpdates, UpdateObject } from '../../../src/updates/index.ts';
import { tempDir, waitFor } from '../../support/fixtures.ts';
import {
  type Doc,
  documents,
  errorOf,
  importCrossref,
  importSample,
  KEY_NO_UPDATES,
  makeApp,
  post,
  postDois,
  type RawBody,
  streamOf,
} from '../http-support.ts';

/**
 * The Updates API (docs/interface.md, "Updates API") over real LMDB stores: production holds the real
 * Retraction Watch sample plus a little Crossref data, staging holds other Crossref data only.
 */

let dir: ReturnType<typeof tempDir>;
let production: Store;
let staging: Store;
let sample: ParsedUpdates;
let app: App;

const PATHS = ['/v2.1/updates', '/v2.2/updates'] as const;

// Values read straight from the CSV (checked with Python's csv module), not from the importer.
const IJO: UpdateObject[] = [
  {
    updateDoi: '10.3892/ijo.2022.5463',
    source: 'retraction-watch',
    updateType: 'correction',
    updateDate: '2022-12-07',
    reasons: ['Duplication of/in Image', 'Error in Image', 'Objections by Third Party', 'Updated to Retraction'],
    urls: ['https://doi.org/10.3892/ijo.2022.5463'],
  },
  {
    updateDoi: '10.3892/ijo.2023.5552',
    source: 'retraction-watch',
    updateType: 'retraction',
    updateDate: '2023-08-04',
    reasons: [
      'Concerns/Issues About Data',
      'Concerns/Issues About Image',
      'Duplication of/in Image',
      'Objections by Third Party',
      'Unreliable Data',
      'Upgrade/Update of Prior Notice(s)',
    ],
    urls: ['https://doi.org/10.3892/ijo.2023.5552'],
  },
];
const SPRINGER_URL =
  'http://retractionwatch.com/2021/09/28/springer-nature-slaps-more-than-400-papers-with-expressions-of-concern-all-at-once/';
/** In the CSV the retraction row comes first; served oldest updateDate first, the expression of concern leads. */
const SPRINGER: UpdateObject[] = [
  {
    updateDoi: '10.1007/s12517-021-08471-8',
    source: 'retraction-watch',
    updateType: 'expression_of_concern',
    updateDate: '2021-09-28',
    reasons: ['Fake Peer Review', 'Investigation by Journal/Publisher', 'Rogue Editor', 'Updated to Retraction'],
    urls: [SPRINGER_URL, 'https://doi.org/10.1007/s12517-021-08471-8'],
  },
  {
    updateDoi: '10.1007/s12517-021-09060-5',
    source: 'retraction-watch',
    updateType: 'retraction',
    updateDate: '2021-11-22',
    reasons: [
      'Fake Peer Review',
      'Investigation by Journal/Publisher',
      'Computer-Aided Content or Computer-Generated Content',
      'Rogue Editor',
      'Upgrade/Update of Prior Notice(s)',
    ],
    urls: [SPRINGER_URL, 'https://doi.org/10.1007/s12517-021-09060-5'],
  },
];
const JBC_RW: UpdateObject = {
  updateDoi: '10.1074/jbc.A116.204376',
  source: 'retraction-watch',
  updateType: 'retraction',
  updateDate: '2016-05-20',
  reasons: [
    'Duplication of/in Image',
    'Error in Image',
    'Falsification/Fabrication of Data',
    'Investigation by Journal/Publisher',
  ],
  // the URLS column, then the notice's doi.org link
  urls: [
    'http://retractionwatch.com/2016/06/03/authors-reused-images-in-three-papers-concludes-journal-probe/',
    'https://doi.org/10.1074/jbc.A116.204376',
  ],
};

/** A Crossref correction of the JBC paper, older than its Retraction Watch retraction: served first. */
const JBC_CROSSREF: UpdateObject = {
  updateDoi: '10.1074/jbc.corr.2015',
  source: 'crossref',
  updateType: 'correction',
  updateDate: '2015-03',
  reasons: [],
  urls: ['https://doi.org/10.1074/jbc.corr.2015'],
};
const PROD_ONLY: UpdateObject = {
  updateDoi: '10.5555/prod.notice',
  source: 'crossref',
  updateType: 'erratum',
  updateDate: '2017-03-01',
  reasons: [],
  urls: ['https://doi.org/10.5555/prod.notice'],
};
const STAGING_IJO: UpdateObject = {
  updateDoi: '10.5555/staging.notice.1',
  source: 'crossref',
  updateType: 'correction',
  updateDate: '2019-06-02',
  reasons: [],
  urls: ['https://doi.org/10.5555/staging.notice.1'],
};
const STAGING_ONLY: UpdateObject = {
  updateDoi: '10.5555/staging.notice.2',
  source: 'crossref',
  updateType: 'retraction',
  updateDate: '2020-04',
  reasons: [],
  urls: ['https://doi.org/10.5555/staging.notice.2'],
};

beforeAll(async () => {
  dir = tempDir('doi-holdings-http-');
  production = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  staging = Store.open(dir.path, 'staging', { mapSizeBytes: 1 << 30 });
  sample = await importSample([production]);
  // Crossref-shaped input through the real code path: a notice with update-to, and a work with updated-by
  await importCrossref([production], {
    message: {
      items: [
        {
          DOI: '10.1074/jbc.corr.2015',
          'update-to': [
            {
              DOI: '10.1074/JBC.M204376200',
              type: 'correction',
              source: 'publisher',
              updated: { 'date-parts': [[2015, 3]] },
            },
          ],
        },
        {
          DOI: '10.5555/Prod-Only',
          'updated-by': [
            {
              DOI: '10.5555/prod.notice',
              type: 'erratum',
              source: 'publisher',
              updated: { 'date-parts': [[2017, 3, 1]] },
            },
          ],
        },
      ],
    },
  });
  await importCrossref(
    [staging],
    [
      {
        DOI: '10.5555/staging.notice.1',
        'update-to': [
          {
            DOI: '10.3892/IJO.2017.3871',
            type: 'Correction',
            source: 'publisher',
            updated: { 'date-parts': [[2019, 6, 2]] },
          },
        ],
      },
      {
        DOI: '10.5555/staging-only',
        'updated-by': [
          {
            DOI: '10.5555/staging.notice.2',
            type: 'retraction',
            source: 'publisher',
            updated: { 'date-parts': [[2020, 4]] },
          },
        ],
      },
    ],
  );
  app = makeApp({ production: { store: production }, staging: { store: staging } });
});

afterAll(async () => {
  await production?.close();
  await staging?.close();
  dir?.remove();
});

describe('200: one document per DOI, in request order', () => {
  for (const path of PATHS)
    test(`${path}: order, duplicates and the update objects of the sample`, async () => {
      const dois = [
        '10.3892/ijo.2017.3871',
        '10.9999/not-in-any-source',
        '10.1007/s12517-021-07389-5',
        '10.3892/ijo.2017.3871',
        '10.18384/2224-0209-2015-4-719',
      ];
      const docs = await documents(await postDois(app, path, dois));
      expect(docs).toEqual([
        { doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO },
        { doi: '10.9999/not-in-any-source', statusCode: 200, updates: [] },
        { doi: '10.1007/s12517-021-07389-5', statusCode: 200, updates: SPRINGER },
        { doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO },
        {
          doi: '10.18384/2224-0209-2015-4-719',
          statusCode: 200,
          updates: [
            {
              updateDoi: null,
              source: 'retraction-watch',
              updateType: expect.any(String),
              updateDate: '2019-02-25',
              reasons: expect.any(Array),
              urls: expect.any(Array),
            },
          ],
        },
      ]);
      // a notice without a DOI gets no doi.org link
      expect(docs[4]!.updates[0]!.urls.some((u) => u.includes('doi.org'))).toBe(false);
      // the exact wire form: keys in the interface's order, nothing else (no store-internal fields)
      for (const d of docs) {
        expect(Object.keys(d)).toEqual(['doi', 'statusCode', 'updates']);
        for (const u of d.updates)
          expect(Object.keys(u)).toEqual(['updateDoi', 'source', 'updateType', 'updateDate', 'reasons', 'urls']);
      }
    });

  test('each reply keeps its own bytes when later requests are answered before it is read (the reply buffer is reused)', async () => {
    const first = await postDois(app, '/v2.2/updates', ['10.3892/ijo.2017.3871']);
    const second = await postDois(app, '/v2.2/updates', ['10.9999/other-1', '10.9999/other-2', '10.9999/other-3']);
    expect(await documents(first)).toEqual([{ doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO }]);
    expect((await documents(second)).map((d) => d.doi)).toEqual([
      '10.9999/other-1',
      '10.9999/other-2',
      '10.9999/other-3',
    ]);
  });

  test('v2.1 and v2.2 give byte-identical answers', async () => {
    const dois = ['10.1074/jbc.M204376200', 'hello', '10.5555/prod-only', '10.9999/none'];
    const a = await (await postDois(app, '/v2.1/updates', dois)).text();
    const b = await (await postDois(app, '/v2.2/updates', dois)).text();
    expect(a).toBe(b);
    expect(JSON.parse(a).documents).toHaveLength(4);
  });

  test('every work of the sample is served with exactly the updates the importer read, oldest first', async () => {
    const works = [...sample.works.values()].filter((w) => w.doi.toLowerCase() !== '10.1074/jbc.m204376200');
    expect(works.length).toBe(2974);
    const canon = (us: UpdateObject[]) => us.map((u) => JSON.stringify(u)).sort();
    let withSeveral = 0;
    for (let i = 0; i < works.length; i += 100) {
      const batch = works.slice(i, i + 100);
      const docs = await documents(
        await postDois(
          app,
          '/v2.2/updates',
          batch.map((w) => w.doi),
        ),
      );
      expect(docs.map((d) => d.doi)).toEqual(batch.map((w) => w.doi));
      docs.forEach((d, j) => {
        expect(d.statusCode).toBe(200);
        expect(canon(d.updates)).toEqual(canon(batch[j]!.updates));
        const dates = d.updates.map((u) => u.updateDate);
        expect(dates).toEqual([...dates].sort());
        if (d.updates.length > 1) withSeveral++;
      });
    }
    // 2975 works, 9 of them with two updates (counted from the CSV with Python's csv module)
    expect(withSeveral).toBe(9);
  });

  test('updates from two sources for one work are merged, oldest updateDate first', async () => {
    const docs = await documents(await postDois(app, '/v2.2/updates', ['10.1074/jbc.M204376200', '10.5555/prod-only']));
    expect(docs).toEqual([
      { doi: '10.1074/jbc.M204376200', statusCode: 200, updates: [JBC_CROSSREF, JBC_RW] },
      { doi: '10.5555/prod-only', statusCode: 200, updates: [PROD_ONLY] },
    ]);
  });

  test('100 DOIs (the limit) are answered, duplicates kept', async () => {
    const dois = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? '10.3892/ijo.2017.3871' : `10.9999/x${i}`));
    const docs = await documents(await postDois(app, '/v2.2/updates', dois));
    expect(docs).toHaveLength(100);
    expect(docs.map((d) => d.doi)).toEqual(dois);
    expect(docs.filter((d) => d.updates.length === 2)).toHaveLength(50);
    expect(docs.every((d) => d.statusCode === 200 && Array.isArray(d.updates))).toBe(true);
  });

  test('an integrator without the updates feature still gets the updates key and the same update information', async () => {
    const dois = ['10.3892/ijo.2017.3871', '10.9999/none'];
    const withFeature = await documents(await postDois(app, '/v2.2/updates', dois));
    const without = await documents(await postDois(app, '/v2.2/updates', dois, { key: KEY_NO_UPDATES }));
    expect(without).toEqual(withFeature);
    expect(without[0]!.updates).toEqual(IJO);
    expect(without[1]!.updates).toEqual([]);
  });

  test('an import made after the app started is served (the read index follows the store)', async () => {
    const late = '10.5555/late-arrival';
    expect((await documents(await postDois(app, '/v2.2/updates', [late])))[0]!.updates).toEqual([]);
    await importCrossref([production], {
      DOI: late,
      'updated-by': [{ DOI: '10.5555/late.notice', type: 'withdrawal', updated: { 'date-parts': [[2024, 2, 29]] } }],
    });
    const docs = await waitFor(
      async () => {
        const d = await documents(await postDois(app, '/v2.2/updates', [late]));
        return d[0]!.updates.length > 0 && d;
      },
      'the late import to be served',
      5000,
    );
    expect(docs).toEqual([
      {
        doi: late,
        statusCode: 200,
        updates: [
          {
            updateDoi: '10.5555/late.notice',
            source: 'crossref',
            updateType: 'withdrawal',
            updateDate: '2024-02-29',
            reasons: [],
            urls: ['https://doi.org/10.5555/late.notice'],
          },
        ],
      },
    ]);
  });
});

describe('DOI forms', () => {
  const forms = [
    '10.3892/ijo.2017.3871',
    '10.3892/IJO.2017.3871',
    'doi:10.3892/ijo.2017.3871',
    'DOI:10.3892/IJO.2017.3871',
    'doi: 10.3892/ijo.2017.3871',
    'https://doi.org/10.3892/ijo.2017.3871',
    'http://doi.org/10.3892/IJO.2017.3871',
    'http://dx.doi.org/10.3892/ijo.2017.3871',
    'https://dx.doi.org/10.3892/ijo.2017.3871',
    'HTTPS://DOI.ORG/10.3892/ijo.2017.3871',
    '  10.3892/ijo.2017.3871\t',
  ];
  for (const path of PATHS)
    test(`${path}: every accepted form gives the same updates and echoes the DOI as sent`, async () => {
      const docs = await documents(await postDois(app, path, forms));
      expect(docs).toEqual(forms.map((doi) => ({ doi, statusCode: 200, updates: IJO })));
    });

  test('a doi.org link is percent-decoded as a URL path; the bare and doi: forms are not; a broken encoding is a 400 entry', async () => {
    const dois = [
      'https://doi.org/10.3892%2Fijo.2017.3871',
      'http://dx.doi.org/10.3892/ijo.2017%2E3871',
      '10.3892%2Fijo.2017.3871',
      'doi:10.3892%2Fijo.2017.3871',
      'https://doi.org/10.3892/ijo%zz',
      'https://doi.org/10.3892/ijo%C3%28',
    ];
    const docs = await documents(await postDois(app, '/v2.2/updates', dois));
    expect(docs.slice(0, 2)).toEqual(dois.slice(0, 2).map((doi) => ({ doi, statusCode: 200, updates: IJO })));
    expect(docs.slice(2, 4)).toEqual(
      dois
        .slice(2, 4)
        .map((doi) => ({ doi, statusCode: 400, updates: [], message: expect.stringContaining('not a DOI') })),
    );
    expect(docs[4]).toEqual({
      doi: dois[4],
      statusCode: 400,
      updates: [],
      message: expect.stringContaining('malformed percent-encoding at index 11 of its DOI'),
    });
    expect(docs[5]).toEqual({
      doi: dois[5],
      statusCode: 400,
      updates: [],
      message: expect.stringContaining('%C3%28 at index 11 of its DOI does not decode to UTF-8'),
    });
  });

  test('a DOI stored in mixed case is found in lower case, upper case and as a URL', async () => {
    const forms2 = [
      '10.1074/jbc.M204376200',
      '10.1074/jbc.m204376200',
      '10.1074/JBC.M204376200',
      'https://doi.org/10.1074/JBC.m204376200',
    ];
    const docs = await documents(await postDois(app, '/v2.2/updates', forms2));
    expect(docs).toEqual(forms2.map((doi) => ({ doi, statusCode: 200, updates: [JBC_CROSSREF, JBC_RW] })));
  });

  test('unicode and characters that need JSON escaping are echoed exactly', async () => {
    const dois = ['10.1234/é"\\x', '10.1234/ü<tag>&', '10.1234/a"b\\c', '10.1234/A\\'];
    const r = await postDois(app, '/v2.2/updates', dois);
    expect(await documents(r)).toEqual(dois.map((doi) => ({ doi, statusCode: 200, updates: [] })));
  });
});

describe('per-document 400 for entries that are not DOIs', () => {
  const bad = [
    'hello',
    '10.1234',
    '',
    '10.1234/',
    '10.123/abc',
    'doi:',
    'https://doi.org/',
    '11.1234/abc',
    '10.1234/a b',
    'https://example.org/10.3892/ijo.2017.3871',
    '10.1234/x\u200b',
  ];
  for (const path of PATHS)
    test(`${path}: the bad entries get statusCode 400 and updates [], the good ones 200`, async () => {
      const dois = ['10.3892/ijo.2017.3871', ...bad, '10.1007/s12517-021-07389-5'];
      const docs = await documents(await postDois(app, path, dois));
      expect(docs).toHaveLength(dois.length);
      expect(docs[0]).toEqual({ doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO });
      expect(docs[docs.length - 1]).toEqual({ doi: '10.1007/s12517-021-07389-5', statusCode: 200, updates: SPRINGER });
      bad.forEach((doi, i) => {
        const d = docs[i + 1] as Doc;
        expect(d).toEqual({ doi, statusCode: 400, updates: [], message: expect.any(String) });
        expect(d.message!.length).toBeGreaterThan(5);
      });
      expect(docs[1]!.message).toContain('not a DOI');
      expect(docs[bad.length]!.message).toContain('U+200B');
    });

  test('a request of only bad entries is still a 200 response', async () => {
    const r = await postDois(app, '/v2.2/updates', ['hello', '']);
    expect(r.status).toBe(200);
    expect((await documents(r)).map((d) => [d.doi, d.statusCode, d.updates])).toEqual([
      ['hello', 400, []],
      ['', 400, []],
    ]);
  });
});

describe('request-level 400', () => {
  const cases: [string, string, string, RegExp][] = [
    ['0 DOIs', '{"dois":[]}', 'BAD_REQUEST', /^\/dois: 0 DOIs given/],
    [
      '101 DOIs',
      JSON.stringify({ dois: Array.from({ length: 101 }, (_, i) => `10.1234/${i}`) }),
      'BAD_REQUEST',
      /^\/dois: 101 DOIs given/,
    ],
    ['a number among the DOIs', '{"dois":["10.1234/a",5]}', 'BAD_REQUEST', /^\/dois\/1: /],
    ['null among the DOIs', '{"dois":["10.1234/a","10.1234/b",null]}', 'BAD_REQUEST', /^\/dois\/2: /],
    ['an object among the DOIs', '{"dois":[{"doi":"10.1234/a"}]}', 'BAD_REQUEST', /^\/dois\/0: /],
    ['dois not an array', '{"dois":"10.1234/a"}', 'BAD_REQUEST', /\/dois/],
    ['missing dois', '{}', 'BAD_REQUEST', /^\/dois: required/],
    [
      'an extra property',
      '{"dois":["10.1234/a"],"org":{"ipv4":"1.2.3.4"}}',
      'BAD_REQUEST',
      /^\/org: unexpected property/,
    ],
    ['a JSON array body', '["10.1234/a"]', 'BAD_REQUEST', /JSON object/],
    ['a JSON string body', '"10.1234/a"', 'BAD_REQUEST', /JSON object/],
    ['a JSON null body', 'null', 'BAD_REQUEST', /JSON object/],
    ['malformed JSON', '{"dois": ["10.1234/a"', 'INVALID_JSON', /not valid JSON/],
    ['an empty body', '', 'INVALID_JSON', /not valid JSON/],
    ['trailing garbage', '{"dois":["10.1234/a"]} x', 'INVALID_JSON', /not valid JSON/],
  ];
  for (const [name, body, code, message] of cases)
    test(`${name}: 400 ${code}`, async () => {
      const e = await errorOf(await post(app, '/v2.2/updates', body));
      expect(e.status).toBe(400);
      expect(e.contentType).toBe('application/json; charset=utf-8');
      expect(Object.keys(e.body)).toEqual(['statusCode', 'error', 'message']);
      expect(e.body.statusCode).toBe(400);
      expect(e.body.error).toBe(code);
      expect(e.body.message).toMatch(message);
    });

  test('INVALID_JSON says where parsing failed: line, column, byte and why', async () => {
    const where: [string, string][] = [
      ['{"dois":["10.1234/a"]} x', 'at line 1, column 24 (byte 23): unexpected "x" after the value'],
      [
        '{"dois":["10.1234/a",]}',
        'at line 1, column 22 (byte 21): unexpected "]" after ",": a trailing comma is not allowed',
      ],
      ['', 'at line 1, column 1 (byte 0): the body is empty'],
      [
        '{"dois":["10.1234/a',
        'at line 1, column 20 (byte 19): unexpected end of the body in the string opened at line 1, column 10 (byte 9)',
      ],
      ['{"dois":\n ["10.1234/\\q"]}', 'at line 2, column 12 (byte 20): bad escape "\\q" in a string'],
      ['{"dois":["10.1234/\u0001"]}', 'at line 1, column 19 (byte 18): control character U+0001 in a string'],
      ['\ufeff{"dois":["10.1234/a"] x', 'at line 1, column 23 (byte 25): unexpected "x", expected "," or "}"'],
    ];
    for (const [body, message] of where) {
      const e = await errorOf(await post(app, '/v2.2/updates', body));
      expect([e.status, e.body.error, e.body.message]).toEqual([
        400,
        'INVALID_JSON',
        expect.stringContaining(`the body is not valid JSON: ${message}`),
      ]);
    }
  });

  test('a body that is not UTF-8 is INVALID_JSON naming the byte, not a DOI with U+FFFD answered "no updates"', async () => {
    const enc = new TextEncoder();
    const withBytes = (...bytes: number[]) =>
      new Uint8Array([...enc.encode('{"dois":["10.1234/ab'), ...bytes, ...enc.encode('"]}')]);
    for (const [body, shown] of [
      [withBytes(0xff), '0xFF'],
      [withBytes(0xc3, 0x28), '0xC3'],
      [withBytes(0xed, 0xa0, 0x80), '0xED'], // an encoded surrogate
      [withBytes(0xc0, 0xaf), '0xC0'], // an overlong "/"
      [withBytes(0xc3), '0xC3'], // cut short
    ] as const) {
      const e = await errorOf(await post(app, '/v2.2/updates', body));
      expect([e.status, e.body.error, e.body.message]).toEqual([
        400,
        'INVALID_JSON',
        `the body is not valid JSON: at line 1, column 21 (byte 20): not UTF-8 (an invalid sequence starts with byte ${shown})`,
      ]);
      const chunked = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(body), c.close()) });
      expect((await errorOf(await post(app, '/v2.2/updates', chunked))).body.error).toBe('INVALID_JSON');
    }
    // U+FFFD sent as itself is text like any other, and echoed
    const docs = await documents(await postDois(app, '/v2.2/updates', ['10.1234/ab\ufffd']));
    expect(docs).toEqual([{ doi: '10.1234/ab\ufffd', statusCode: 200, updates: [] }]);
  });

  test('the same rules on /v2.1 and on staging', async () => {
    for (const path of ['/v2.1/updates', '/staging/v2.1/updates', '/staging/v2.2/updates']) {
      const e = await errorOf(await post(app, path, '{"dois":[]}'));
      expect([e.status, e.body.error]).toEqual([400, 'BAD_REQUEST']);
      expect(e.body.message).toMatch(/^\/dois: 0 DOIs given/);
    }
  });
});

describe('401: the x-api-key', () => {
  test('missing and unknown keys are refused with different messages', async () => {
    const missing = await errorOf(await postDois(app, '/v2.2/updates', ['10.1234/a'], { key: null }));
    const unknown = await errorOf(await postDois(app, '/v2.2/updates', ['10.1234/a'], { key: 'not-a-key' }));
    const empty = await errorOf(await postDois(app, '/v2.2/updates', ['10.1234/a'], { key: '' }));
    for (const e of [missing, unknown, empty]) {
      expect(e.status).toBe(401);
      expect(e.contentType).toBe('application/json; charset=utf-8');
      expect(e.body).toEqual({ statusCode: 401, error: 'UNAUTHORIZED', message: expect.any(String) });
    }
    expect(missing.body.message).toMatch(/missing/);
    expect(unknown.body.message).toMatch(/not known/);
    expect(missing.body.message).not.toBe(unknown.body.message);
  });

  test('a key differing only in case or by a trailing character is unknown', async () => {
    for (const key of ['KEY-WITH-UPDATES-0001', 'key-with-updates-000', 'key-with-updates-00011'])
      expect((await postDois(app, '/v2.2/updates', ['10.1234/a'], { key })).status).toBe(401);
  });

  test('the key is checked before anything about the body', async () => {
    const bad: [RawBody, string | null][] = [
      ['{"dois": [', 'application/json'],
      ['{"dois": []}', 'application/json'],
      ['{"dois": ["10.1234/a"]}', 'text/plain'],
      ['{"dois": ["10.1234/a"]}', null],
      [JSON.stringify({ dois: ['x'], pad: 'y'.repeat(200_000) }), 'application/json'],
    ];
    for (const [body, contentType] of bad)
      for (const key of [null, 'wrong-key']) {
        const e = await errorOf(await post(app, '/v2.2/updates', body, { key, contentType }));
        expect([e.status, e.body.error]).toEqual([401, 'UNAUTHORIZED']);
      }
  });

  test('staging routes need a key too', async () => {
    const e = await errorOf(await postDois(app, '/staging/v2.2/updates', ['10.5555/staging-only'], { key: null }));
    expect([e.status, e.body.error]).toEqual([401, 'UNAUTHORIZED']);
  });
});

describe('415: the Content-Type', () => {
  const body = '{"dois":["10.3892/ijo.2017.3871"]}';
  for (const type of [
    null,
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/jsonp',
    'application/json-seq',
    'multipart/form-data; boundary=x',
  ])
    test(`${type ?? 'no Content-Type'}: 415`, async () => {
      const e = await errorOf(await post(app, '/v2.2/updates', new TextEncoder().encode(body), { contentType: type }));
      expect(e.status).toBe(415);
      expect(e.contentType).toBe('application/json; charset=utf-8');
      expect(e.body).toEqual({
        statusCode: 415,
        error: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringContaining('application/json'),
      });
    });

  for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'])
    test(`${type}: accepted`, async () => {
      const docs = await documents(await post(app, '/v2.2/updates', body, { contentType: type }));
      expect(docs).toEqual([{ doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO }]);
    });

  test('a body with a Content-Encoding other than identity is 415 naming the coding, before the size bound; identity is accepted', async () => {
    const gzipped = Bun.gzipSync(new TextEncoder().encode(body));
    for (const [sent, coding] of [
      [body, 'br'],
      [gzipped, 'gzip'],
      [gzipped, 'GZIP'],
      [body, 'gzip, identity'],
      ['x'.repeat(70_000), 'deflate'],
    ] as const) {
      const e = await errorOf(await post(app, '/v2.2/updates', sent, { headers: { 'content-encoding': coding } }));
      expect([e.status, e.body]).toEqual([
        415,
        {
          statusCode: 415,
          error: 'UNSUPPORTED_MEDIA_TYPE',
          message: expect.stringContaining(`Content-Encoding ${JSON.stringify(coding)}`),
        },
      ]);
    }
    for (const coding of ['identity', 'Identity', ''])
      expect(
        await documents(await post(app, '/v2.2/updates', body, { headers: { 'content-encoding': coding } })),
      ).toEqual([{ doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO }]);
    // the key still comes first
    expect((await post(app, '/v2.2/updates', body, { key: null, headers: { 'content-encoding': 'br' } })).status).toBe(
      401,
    );
  });

  test('415 comes before JSON problems', async () => {
    const e = await errorOf(await post(app, '/v2.2/updates', '{not json', { contentType: 'text/plain' }));
    expect(e.status).toBe(415);
  });
});

describe('413: the body size bound', () => {
  const MAX = 300;
  let small: App;
  beforeAll(() => {
    small = makeApp({ production: { store: production } }, { maxBodyBytes: MAX });
  });
  /** A valid body of exactly `bytes` bytes in UTF-8 (padded inside the DOI string with `pad`). */
  const bodyOf = (bytes: number, pad = 'a') => {
    const base = '{"dois":["10.1234/"]}';
    const n = (bytes - base.length) / Buffer.byteLength(pad);
    if (!Number.isInteger(n) || n < 0) throw new Error('bad size');
    const text = `{"dois":["10.1234/${pad.repeat(n)}"]}`;
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  };
  const tooLarge = { statusCode: 413, error: 'PAYLOAD_TOO_LARGE', message: `the body is larger than ${MAX} bytes` };

  test('with Content-Length: exactly the limit is served, one byte more is 413', async () => {
    const ok = bodyOf(MAX);
    const r = await post(small, '/v2.2/updates', ok, { headers: { 'content-length': String(MAX) } });
    expect((await documents(r))[0]!.statusCode).toBe(200);
    const big = bodyOf(MAX + 1);
    const e = await errorOf(
      await post(small, '/v2.2/updates', big, { headers: { 'content-length': String(MAX + 1) } }),
    );
    expect(e.status).toBe(413);
    expect(e.body).toEqual(tooLarge);
  });

  test('a declared Content-Length over the limit is refused whatever the body', async () => {
    const e = await errorOf(
      await post(small, '/v2.2/updates', '{"dois":["10.1234/a"]}', { headers: { 'content-length': '100000' } }),
    );
    expect([e.status, e.body]).toEqual([413, tooLarge]);
  });

  test('bytes, not characters, are counted (multi-byte UTF-8)', async () => {
    const body = bodyOf(MAX + 1, 'é'); // 301 bytes in 161 characters
    expect(body.length).toBeLessThan(MAX);
    const e = await errorOf(await post(small, '/v2.2/updates', new TextEncoder().encode(body)));
    expect([e.status, e.body]).toEqual([413, tooLarge]);
  });

  test('a streamed body without Content-Length (chunked): the limit is served, more is 413', async () => {
    const okReq = new Request('http://localhost/v2.2/updates', {
      method: 'POST',
      headers: { 'x-api-key': 'key-with-updates-0001', 'content-type': 'application/json' },
      body: streamOf(bodyOf(MAX), 7),
    });
    expect(okReq.headers.get('content-length')).toBeNull();
    const docs = await documents(await small.handle(okReq));
    expect(docs).toHaveLength(1);
    expect(docs[0]!.statusCode).toBe(200);

    const bigReq = new Request('http://localhost/v2.2/updates', {
      method: 'POST',
      headers: { 'x-api-key': 'key-with-updates-0001', 'content-type': 'application/json' },
      body: streamOf(bodyOf(MAX + 1), 7),
    });
    expect(bigReq.headers.get('content-length')).toBeNull();
    const e = await errorOf(await small.handle(bigReq));
    expect([e.status, e.body]).toEqual([413, tooLarge]);
  });

  test('a huge endless-looking stream is answered 413 before it is read whole (the rest is only dropped)', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        if (pulled > 10_000) return c.close();
        c.enqueue(new Uint8Array(1024).fill(0x20));
      },
    });
    const req = new Request('http://localhost/v2.2/updates', {
      method: 'POST',
      headers: { 'x-api-key': 'key-with-updates-0001', 'content-type': 'application/json' },
      body: endless,
    });
    const res = await small.handle(req);
    expect([res.status, pulled < 100]).toEqual([413, true]);
    expect(res.headers.get('connection')).toBe('close');
    // the reply's body ends once the rest was dropped (a lingering close), so the client is not reset mid-send
    const e = await errorOf(res);
    expect([e.status, e.body]).toEqual([413, tooLarge]);
    expect(pulled).toBe(10_001);
  });

  test('a UTF-8 byte order mark before the JSON is ignored (RFC 8259 allows it), with or without Content-Length', async () => {
    const text = '\ufeff{"dois":["10.1234/a"]}';
    const sized = await documents(await post(small, '/v2.2/updates', new TextEncoder().encode(text)));
    const chunked = await documents(await post(small, '/v2.2/updates', streamOf(text, 2)));
    expect(sized).toEqual([{ doi: '10.1234/a', statusCode: 200, updates: [] }]);
    expect(chunked).toEqual(sized);
  });

  test('a body that breaks off mid-stream (the client went away) is a 400 naming the cause, not a 500', async () => {
    for (const contentLength of [undefined, '64']) {
      let sent = 0;
      const broken = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent++ === 0) c.enqueue(new TextEncoder().encode('{"dois":["10.1234/a",'));
          else c.error(new Error('connection reset by peer'));
        },
      });
      const headers: Record<string, string> = {
        'x-api-key': 'key-with-updates-0001',
        'content-type': 'application/json',
      };
      if (contentLength) headers['content-length'] = contentLength;
      const req = new Request('http://localhost/v2.2/updates', {
        method: 'POST',
        headers,
        body: broken,
        duplex: 'half',
      } as RequestInit);
      const e = await errorOf(await small.handle(req));
      expect([contentLength, e.status, e.body]).toEqual([
        contentLength,
        400,
        {
          statusCode: 400,
          error: 'BAD_REQUEST',
          message: 'the request body could not be read to its end: connection reset by peer',
        },
      ]);
    }
  });
});

describe('404 and 405', () => {
  for (const path of ['/nope', '/v2.3/updates', '/v2.2/entitlement', '/staging', '/staging/v2.2/nope', '/updates'])
    test(`POST ${path}: 404 with the JSON error body`, async () => {
      const e = await errorOf(await postDois(app, path, ['10.1234/a']));
      expect(e.status).toBe(404);
      expect(e.contentType).toBe('application/json; charset=utf-8');
      expect(e.body).toEqual({ statusCode: 404, error: 'NOT_FOUND', message: expect.any(String) });
    });

  test('GET on an unknown path: 404', async () => {
    const r = await app.handle(new Request('http://localhost/does/not/exist'));
    expect(await errorOf(r)).toEqual({
      status: 404,
      contentType: 'application/json; charset=utf-8',
      body: { statusCode: 404, error: 'NOT_FOUND', message: expect.any(String) },
    });
  });

  for (const path of ['/v2.1/updates', '/v2.2/updates', '/staging/v2.1/updates', '/staging/v2.2/updates'])
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'])
      test(`${method} ${path}: 405 with Allow: POST`, async () => {
        const r = await app.handle(
          new Request(`http://localhost${path}`, { method, headers: { 'x-api-key': 'key-with-updates-0001' } }),
        );
        expect(r.status).toBe(405);
        expect(r.headers.get('allow')).toBe('POST');
        expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await r.json()).toEqual({
          statusCode: 405,
          error: 'METHOD_NOT_ALLOWED',
          message: expect.stringContaining(method),
        });
      });
});

describe('staging isolation', () => {
  test('staging answers from the staging store only', async () => {
    const dois = [
      '10.3892/ijo.2017.3871',
      '10.5555/staging-only',
      '10.5555/prod-only',
      '10.1074/jbc.M204376200',
      'nope',
    ];
    for (const path of ['/staging/v2.1/updates', '/staging/v2.2/updates']) {
      const docs = await documents(await postDois(app, path, dois));
      expect(docs).toEqual([
        { doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: [STAGING_IJO] },
        { doi: '10.5555/staging-only', statusCode: 200, updates: [STAGING_ONLY] },
        { doi: '10.5555/prod-only', statusCode: 200, updates: [] },
        { doi: '10.1074/jbc.M204376200', statusCode: 200, updates: [] },
        { doi: 'nope', statusCode: 400, updates: [], message: expect.any(String) },
      ]);
    }
  });

  test('production does not see staging updates', async () => {
    for (const path of PATHS) {
      const docs = await documents(await postDois(app, path, ['10.3892/ijo.2017.3871', '10.5555/staging-only']));
      expect(docs).toEqual([
        { doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO },
        { doi: '10.5555/staging-only', statusCode: 200, updates: [] },
      ]);
    }
  });

  test('without a staging environment the staging routes answer 404 NOT_CONFIGURED, production still works', async () => {
    const prodOnly = makeApp({ production: { store: production } });
    for (const path of ['/staging/v2.1/updates', '/staging/v2.2/updates']) {
      const e = await errorOf(await postDois(prodOnly, path, ['10.3892/ijo.2017.3871']));
      expect(e.status).toBe(404);
      expect(e.contentType).toBe('application/json; charset=utf-8');
      expect(e.body).toEqual({ statusCode: 404, error: 'NOT_CONFIGURED', message: expect.any(String) });
      // the key is still required there
      expect((await postDois(prodOnly, path, ['10.3892/ijo.2017.3871'], { key: null })).status).toBe(401);
    }
    expect(await documents(await postDois(prodOnly, '/v2.2/updates', ['10.3892/ijo.2017.3871']))).toEqual([
      { doi: '10.3892/ijo.2017.3871', statusCode: 200, updates: IJO },
    ]);
  });
});
