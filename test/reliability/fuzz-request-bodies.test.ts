import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { isIPv4, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { FAULT_CODES } from '../../src/base/fault.ts';
import { MAX_DOIS_PER_REQUEST, NOT_PLAIN, plainDoiHash } from '../../src/doi/index.ts';
import type { App } from '../../src/http/index.ts';
import { scanEntitlementBody, scanPlainBody } from '../../src/http/wire/plain-body.ts';
import { Store } from '../../src/store/index.ts';
import { importUpdates } from '../../src/updates/index.ts';
import { entitlementsWithoutApi, KEY, KEY_NO_UPDATES, makeApp, post } from '../http/http-support.ts';
import { tempDir } from '../support/fixtures.ts';
import { preparedFile } from '../support/prepared-file.ts';
import { clone, type J, mutate, mutationArb, type Obj, obj, objectsIn, ser, styleArb } from './fuzz-json.ts';
import { apiDoi, awkwardString, doiForms, fuzz, keyOf } from './fuzz-support.ts';

/**
 * Property-based fuzzing of the Updates and Entitlement API request bodies (docs/interface.md, "Updates API",
 * "Entitlement API"; docs/reliability.md), through a real app over a real store. Any body gets a documented
 * status: 200 with one answer per entry as a model of the interface predicts it, or the request-level error the
 * model predicts, with its code; never a 500. The plain-body byte scanner (src/http/wire/plain-body.ts) is held to the
 * general JSON path: a body and the same body behind a UTF-8 BOM (which the scanner never reads, and JSON
 * ignores) get the same reply, byte for byte.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true }); // as the server reads a body: malformed UTF-8 is INVALID_JSON, a BOM is dropped
const HTTP_CODES: readonly string[] = FAULT_CODES.http;
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const withBom = (b: Uint8Array) => new Uint8Array(Buffer.concat([BOM, b]));

// ---- the data the app answers from ----

const OPEN_ISH = ['open', 'free', 'permFree'];
const HOLDINGS: { doi: string; accessType?: string; vor?: { url: string; contentType?: string }[] }[] = [
  {
    doi: '10.5555/Open.1',
    accessType: 'open',
    vor: [{ url: 'https://h.example/open.1.pdf', contentType: 'application/pdf' }, { url: 'https://h.example/open.1' }],
  },
  { doi: '10.5555/free.2', accessType: 'free' },
  {
    doi: '10.5555/PermFree.3',
    accessType: 'permFree',
    vor: [{ url: 'https://h.example/p"3', contentType: 'text/html' }],
  },
  { doi: '10.5555/paid.4', accessType: 'paid', vor: [{ url: 'https://h.example/paid.4.pdf' }] },
  { doi: '10.5555/none.5' },
  { doi: '10.5555/é"\\.6', accessType: 'open' },
  { doi: '10.123456789/X', accessType: 'paid' },
];
const held = new Map(HOLDINGS.map((h) => [keyOf(h.doi), h]));

const CSV = [
  'Record ID,OriginalPaperDOI,RetractionDOI,RetractionDate,RetractionNature,Reason,URLS',
  '1,10.5555/Open.1,10.5555/notice.1,2020-03-04,Retraction,+Fake Peer Review;,https://rw.example/1',
  '2,doi:10.5555/OPEN.1,unavailable,1/5/2019 0:00,Correction,,',
  '3,https://doi.org/10.5555/gone.9,10.5555/notice.9,2021,Expression of concern,+Concerns/Issues About Data;+Investigation by Journal/Publisher;,',
  '4,"10.5555/é""\\.6",10.5555/notice.6,12/31/2022 10:11,Retraction,,"https://rw.example/6;https://rw.example/6b"',
].join('\r\n');
const rw = (updateDoi: string | null, updateType: string, updateDate: string, reasons: string[], urls: string[]) => ({
  updateDoi,
  source: 'retraction-watch',
  updateType,
  updateDate,
  reasons,
  urls,
});
/** What the Updates API serves per DOI key: read off the CSV above by hand, oldest first. */
const UPDATES = new Map<string, unknown[]>([
  [
    '10.5555/open.1',
    [
      rw(null, 'correction', '2019-01-05', [], []),
      rw(
        '10.5555/notice.1',
        'retraction',
        '2020-03-04',
        ['Fake Peer Review'],
        ['https://rw.example/1', 'https://doi.org/10.5555/notice.1'],
      ),
    ],
  ],
  [
    '10.5555/gone.9',
    [
      rw(
        '10.5555/notice.9',
        'expression_of_concern',
        '2021',
        ['Concerns/Issues About Data', 'Investigation by Journal/Publisher'],
        ['https://doi.org/10.5555/notice.9'],
      ),
    ],
  ],
  [
    '10.5555/é"\\.6',
    [
      rw(
        '10.5555/notice.6',
        'retraction',
        '2022-12-31',
        [],
        ['https://rw.example/6', 'https://rw.example/6b', 'https://doi.org/10.5555/notice.6'],
      ),
    ],
  ],
]);

let dir: ReturnType<typeof tempDir>;
let store: Store;
let app: App;
/** the same app with a 1 KiB body bound, for the 413 property */
let small: App;

beforeAll(async () => {
  dir = tempDir('doi-holdings-fuzz-bodies-');
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  store.applyFilesSync([preparedFile(HOLDINGS, { platform: 'acme' })]);
  const imported = await importUpdates(
    [store],
    'retraction-watch-csv',
    (async function* () {
      yield encoder.encode(CSV);
    })(),
  );
  if ('code' in imported) throw new Error(imported.message);
  const envs = { production: { store } };
  app = makeApp(envs, { entitlements: entitlementsWithoutApi() });
  small = makeApp(envs, { maxBodyBytes: 1024, entitlements: entitlementsWithoutApi() });
});
afterAll(async () => {
  await store?.close();
  dir?.remove();
});

// ---- generators ----

/** A DOI entry as an integrator might send it: a known DOI in any form and case, or anything else. */
const sentDoiArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...HOLDINGS.map((h) => h.doi), '10.5555/gone.9', '10.5555/unknown.1'),
        fc.boolean(),
        fc.constantFrom('', '', '', 'doi:', 'DOI: ', 'https://doi.org/', 'HTTP://DX.DOI.ORG/', 'https://doi.org/doi:'),
        fc.constantFrom('', '', ' ', '\t', '\u00a0', '\n'),
      )
      .chain(([doi, flip, pre, pad]) =>
        fc.mixedCase(fc.constant(doi)).map((mixed) => `${pad}${pre}${flip ? mixed : doi}${pad}`),
      ),
  },
  { weight: 3, arbitrary: doiForms() },
  awkwardString(10, { lone: true }),
);

/** An org that keeps every rule: addresses that parse, openAthensOrgID and eduPersonScopedAffiliation only with entityID. */
const validOrgArb: fc.Arbitrary<J> = fc
  .record(
    {
      ipv4: fc.ipV4(),
      ipv6: fc.ipV6(),
      idp: fc.option(
        fc.record(
          {
            entityID: fc.webUrl(),
            openAthensOrgID: fc.stringMatching(/^[a-z0-9-]{1,20}$/),
            eduPersonScopedAffiliation: fc.emailAddress(),
          },
          { requiredKeys: ['entityID'] },
        ),
        { nil: undefined },
      ),
      ringgoldID: fc.stringMatching(/^[0-9]{1,10}$/),
    },
    { requiredKeys: [] },
  )
  .map(({ idp, ...rest }) => obj(Object.entries({ ...rest, ...idp }) as [string, J][]));

const hostileOrgArb: fc.Arbitrary<J> = fc
  .record(
    {
      ipv4: fc.oneof(
        fc.ipV4(),
        fc.constantFrom('192.0.2.10', '300.1.1.1', '01.1.1.1', '1.2.3', '1.2.3.4.5', ' 1.2.3.4', '', '255.255.255.255'),
      ),
      ipv6: fc.oneof(
        fc.ipV6(),
        fc.constantFrom(
          '2001:db8::1',
          '::1',
          '1::2::3',
          'fe80::1%eth0',
          '::ffff:192.0.2.1',
          'x',
          '2001:0db8:0000:0000:0000:ff00:0042:8329:1',
        ),
      ),
      entityID: fc.constantFrom('https://idp.example/shibboleth', '', 'x'.repeat(1024), 'x'.repeat(1025)),
      openAthensOrgID: fc.constantFrom('oa-123', '', 'y'.repeat(257)),
      eduPersonScopedAffiliation: fc.constantFrom('member@university.example', ''),
      ringgoldID: fc.constantFrom('60025', 'r'.repeat(65)),
      gridID: fc.constantFrom('grid.1.2'),
      rorID: fc.constantFrom('https://ror.org/02mhbdp94'),
    },
    { requiredKeys: [] },
  )
  .map((o) => obj(Object.entries(o) as [string, J][]));

const orgArb = fc.oneof({ weight: 3, arbitrary: validOrgArb }, hostileOrgArb);

/** What the byte scanner reads: printable ASCII without quotes or backslashes, in any DOI form or none. */
const plainDoiArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: sentDoiArb.filter((d) => /^[ -~]*$/.test(d) && !/["\\]/.test(d)) },
  fc.stringMatching(/^[!#-[\]-~ ]{0,12}$/),
  fc.constantFrom('10.5555/', '10.123/x', '10.1234567890/x', 'doi:', ''),
);

const entryArb: fc.Arbitrary<J> = fc.oneof(
  { weight: 8, arbitrary: sentDoiArb },
  fc
    .tuple(
      sentDoiArb,
      fc.option(
        fc.oneof(awkwardString(8, { lone: true }), fc.constant('u'.repeat(256)), fc.constant('u'.repeat(257))),
        { nil: undefined },
      ),
    )
    .map(
      ([doi, uid]): J =>
        obj(
          uid === undefined
            ? [['doi', doi]]
            : [
                ['doi', doi],
                ['uid', uid],
              ],
        ),
    ),
  fc.constantFrom<J>(
    obj([['uid', 'only-uid']]),
    obj([
      ['title', 'A title'],
      ['year', 2020],
    ]),
    obj([
      ['doi', '10.5555/Open.1'],
      ['journal', obj([])],
    ]),
    obj([
      ['doi', '10.5555/Open.1'],
      ['journal', 'A journal'],
      ['authors', ['Jane Doe']],
      ['exactTitleMatch', true],
    ]),
    obj([]),
  ),
);

/** How many entries: mostly few, sometimes at and around the 100 bound. */
function listOf(entry: fc.Arbitrary<J>): fc.Arbitrary<J[]> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.array(entry, { minLength: 0, maxLength: 8 }) },
    fc.tuple(fc.constantFrom(99, 100, 101), entry).map(([n, e]) => Array.from({ length: n }, () => e)),
  );
}

/** A body: the request shape (members in any order), mutated 0 to 2 times, in any JSON style. */
function bodyArb(api: 'updates' | 'entitlements'): fc.Arbitrary<Uint8Array> {
  const shape: fc.Arbitrary<Obj> =
    api === 'updates'
      ? listOf(sentDoiArb).map((dois) => obj([['dois', dois]]))
      : fc.tuple(listOf(entryArb), fc.option(orgArb, { nil: undefined }), fc.boolean()).map(([dois, org, orgFirst]) => {
          if (org === undefined) return obj([['dois', dois]]);
          return obj(
            orgFirst
              ? [
                  ['org', org],
                  ['dois', dois],
                ]
              : [
                  ['dois', dois],
                  ['org', org],
                ],
          );
        });
  const json = fc
    .tuple(
      shape,
      fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, fc.array(mutationArb, { maxLength: 2 })),
      styleArb,
    )
    .map(([b, ms, style]) => {
      const v = clone(b) as Obj;
      for (const m of ms) mutate(objectsIn(v), m);
      return encoder.encode(ser(v, style));
    });
  // the plain shape the scanner reads, with any JSON whitespace, org members and DOIs in any plain form
  const plainShape = fc
    .tuple(listOf(plainDoiArb), fc.option(orgArb, { nil: undefined }), fc.boolean(), styleArb)
    .map(([dois, org, orgFirst, style]) => {
      const members: [string, J][] = [['dois', dois]];
      if (api === 'entitlements' && org !== undefined) members[orgFirst ? 'unshift' : 'push'](['org', org]);
      return encoder.encode(ser(obj(members), { ...style, escape: 0 }));
    });
  // a few characters inserted, deleted or replaced anywhere: trailing commas, broken strings, doubled members
  // (mostly at the structure: next to a bracket, brace, comma, colon or quote)
  const edit = fc.record({
    at: fc.nat(),
    structural: fc.boolean(),
    op: fc.constantFrom('insert', 'delete', 'replace'),
    text: fc.constantFrom(
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
      's',
      '1',
      '/',
      'é',
      '\u0000',
      '"dois":',
      '"org":{},',
      '[]',
      'null',
    ),
  });
  const edited = fc
    .tuple(fc.oneof(plainShape, json), fc.array(edit, { minLength: 1, maxLength: 3 }))
    .map(([b, edits]) => {
      let t = decoder.decode(b);
      for (const { at, structural, op, text } of edits) {
        const marks = structural ? [...t.matchAll(/[[\]{},:"]/g)].map((m) => m.index) : [];
        const i = marks.length > 0 ? marks[at % marks.length]! + ((at >> 4) % 2) : at % (t.length + 1);
        t = t.slice(0, i) + (op === 'delete' ? '' : text) + t.slice(op === 'insert' ? i : i + 1);
      }
      return encoder.encode(t);
    });
  // the plain shape as tokens, 1 to 3 of them inserted, deleted or replaced: `["a",]`, `[,"a"]`, `"dois":"a"`,
  // a member twice, a missing brace... what a byte scanner must decline or read as JSON.parse does
  const TOKENS = [
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    '"dois"',
    '"org"',
    '"x"',
    '"10.5555/Open.1"',
    '{}',
    '[]',
    'null',
    '1',
    '"\\u0064ois"',
  ];
  const tokenEdit = fc.record({
    at: fc.nat(),
    op: fc.constantFrom('insert', 'delete', 'replace'),
    token: fc.constantFrom(...TOKENS),
  });
  const tokens = fc
    .tuple(
      fc.array(plainDoiArb, { minLength: 1, maxLength: 4 }),
      fc.option(validOrgArb, { nil: undefined }),
      fc.array(tokenEdit, { minLength: 1, maxLength: 3 }),
      fc.constantFrom('', ' ', '\n'),
    )
    .map(([dois, org, edits, space]) => {
      const t = [
        '{',
        '"dois"',
        ':',
        '[',
        ...dois.flatMap((d, i) => (i === 0 ? [JSON.stringify(d)] : [',', JSON.stringify(d)])),
        ']',
      ];
      if (api === 'entitlements' && org !== undefined) t.push(',', '"org"', ':', ser(org));
      t.push('}');
      for (const { at, op, token } of edits) {
        const i = at % (t.length + (op === 'insert' ? 1 : 0));
        if (op === 'insert') t.splice(i, 0, token);
        else if (op === 'delete') t.splice(i, 1);
        else t[i] = token;
      }
      return encoder.encode(t.join(space));
    });
  return fc.oneof(
    { weight: 10, arbitrary: json },
    { weight: 6, arbitrary: plainShape },
    { weight: 4, arbitrary: edited },
    { weight: 6, arbitrary: tokens },
    // text around it, or cut short
    fc.tuple(json, fc.constantFrom('', ' ', '\n', 'x', ',', '}', '\u00a0'), fc.nat()).map(([b, tail, cut]) => {
      const bytes = new Uint8Array(Buffer.concat([b, encoder.encode(tail)]));
      return cut % 3 === 0 ? bytes.subarray(0, cut % (bytes.length + 1)) : bytes;
    }),
    // invalid UTF-8 inside
    fc.tuple(json, fc.nat(), fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80])).map(([b, at, bad]) => {
      const i = at % (b.length + 1);
      return new Uint8Array(Buffer.concat([b.subarray(0, i), new Uint8Array(bad), b.subarray(i)]));
    }),
    fc.uint8Array({ maxLength: 64 }),
    fc.json({ maxDepth: 3 }).map((t) => encoder.encode(t)),
    fc
      .constantFrom('', '{}', '[]', 'null', '{"dois":null}', '{"dois":[]}', '\ufeff{"dois":["10.5555/Open.1"]}')
      .map((t) => encoder.encode(t)),
  );
}

// ---- the model: what the interface says a body gets ----

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const ORG_BOUNDS: Record<string, [number, number]> = {
  ipv4: [0, 15],
  ipv6: [0, 45],
  entityID: [1, 1024],
  openAthensOrgID: [1, 256],
  eduPersonScopedAffiliation: [1, 1024],
  ringgoldID: [1, 64],
  gridID: [1, 64],
  rorID: [1, 256],
};
const ENTRY_MEMBERS = ['doi', 'uid', 'title', 'journal', 'authors', 'year', 'preprintDoi', 'exactTitleMatch'];

type Expected =
  | { status: 200; dois: unknown[] }
  | { status: 400 | 413; error: 'INVALID_JSON' | 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE' };

/** The body's outcome once the key and media type are right: 413 over the bound, then JSON, then the shape and the org rules. */
function modelRequest(api: 'updates' | 'entitlements', bytes: Uint8Array, maxBytes = 64 * 1024): Expected {
  if (bytes.length > maxBytes) return { status: 413, error: 'PAYLOAD_TOO_LARGE' };
  let v: unknown;
  try {
    v = JSON.parse(strictDecoder.decode(bytes));
  } catch {
    return { status: 400, error: 'INVALID_JSON' };
  }
  const bad = { status: 400, error: 'BAD_REQUEST' } as const;
  if (!isPlainObject(v)) return bad;
  if (Object.keys(v).some((k) => k !== 'dois' && (api === 'updates' || k !== 'org'))) return bad;
  const dois = v.dois;
  if (!Array.isArray(dois) || dois.length < 1 || dois.length > 100) return bad;
  for (const e of dois) {
    if (typeof e === 'string') continue;
    if (api === 'updates' || !isPlainObject(e) || Object.keys(e).some((k) => !ENTRY_MEMBERS.includes(k))) return bad;
    if ('doi' in e && typeof e.doi !== 'string') return bad;
    if ('uid' in e && (typeof e.uid !== 'string' || e.uid.length > 256)) return bad;
  }
  if ('org' in v) {
    const org = v.org;
    if (!isPlainObject(org)) return bad;
    for (const [k, x] of Object.entries(org)) {
      const bounds = Object.hasOwn(ORG_BOUNDS, k) ? ORG_BOUNDS[k] : undefined; // not `__proto__`'s Object.prototype
      if (!bounds || typeof x !== 'string' || x.length < bounds[0] || x.length > bounds[1]) return bad;
    }
    if (org.ipv4 !== undefined && !isIPv4(org.ipv4 as string)) return bad;
    // a zone (fe80::1%eth0) is no reader's address, though isIPv6 takes it
    if (org.ipv6 !== undefined && (!isIPv6(org.ipv6 as string) || (org.ipv6 as string).includes('%'))) return bad;
    if (
      (org.openAthensOrgID !== undefined || org.eduPersonScopedAffiliation !== undefined) &&
      org.entityID === undefined
    )
      return bad;
  }
  return { status: 200, dois };
}

const UPDATES_ORDER = ['doi', 'statusCode', 'updates', 'message'];
const ENTITLEMENT_ORDER = [
  'doi',
  'statusCode',
  'message',
  'entitled',
  'accessType',
  'source',
  'document',
  'vor',
  'org',
  'uid',
  'updates',
];

function expectOrder(o: object, order: string[]): void {
  const keys = Object.keys(o);
  expect(keys).toEqual(order.filter((k) => keys.includes(k)));
}

/** One Updates API document: the DOI as sent, 200 and its updates for a DOI in any accepted form, else 400 and why. */
function expectDocument(doc: Record<string, unknown>, sent: string): void {
  expectOrder(doc, UPDATES_ORDER);
  const bare = apiDoi(sent);
  if (bare === undefined) {
    expect(doc).toEqual({ doi: sent, statusCode: 400, updates: [], message: expect.any(String) });
    expect((doc.message as string).length).toBeGreaterThan(0);
  } else expect(doc).toEqual({ doi: sent, statusCode: 200, updates: UPDATES.get(keyOf(bare)) ?? [] });
}

/** One Entitlement Object, as "How each entry is decided" says, for a platform without an Entitlement API. */
function expectEntitlement(got: Record<string, unknown>, entry: unknown, withUpdates: boolean): void {
  expectOrder(got, ENTITLEMENT_ORDER);
  const sent = typeof entry === 'string' ? entry : (entry as { doi?: string }).doi;
  const uid = typeof entry === 'string' ? undefined : (entry as { uid?: string }).uid;
  const bare = sent === undefined ? undefined : apiDoi(sent);
  const want: Record<string, unknown> = sent === undefined ? {} : { doi: sent };
  const h = bare === undefined ? undefined : held.get(keyOf(bare));
  if (bare === undefined) Object.assign(want, { statusCode: 400, message: expect.any(String) });
  else if (!h) want.statusCode = 404;
  else if (OPEN_ISH.includes(h.accessType ?? ''))
    Object.assign(
      want,
      { statusCode: 200, entitled: 'yes', accessType: h.accessType, source: 'oa_platform' },
      h.vor ? { vor: h.vor } : {},
    );
  else
    Object.assign(want, { statusCode: 200, entitled: 'maybe' }, h.accessType ? { accessType: h.accessType } : {}, {
      source: 'publisher_not_supported',
    });
  if (uid !== undefined) want.uid = uid;
  if (withUpdates) want.updates = bare === undefined ? [] : (UPDATES.get(keyOf(bare)) ?? []);
  expect(got).toEqual(want);
}

const API_PATHS = { updates: '/v2.2/updates', entitlements: '/v2.1/entitlements' } as const;

/** A response held to the model: the predicted status and error code, or one predicted answer per entry. */
async function expectReply(
  api: 'updates' | 'entitlements',
  r: Response,
  want: Expected,
  staging: boolean,
  key: string,
): Promise<void> {
  const text = await r.text();
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = JSON.parse(text) as Record<string, unknown>;
  if (want.status !== 200 || staging) {
    const [status, error] = want.status !== 200 ? [want.status, want.error] : [404, 'NOT_CONFIGURED'];
    expect({ status: r.status, body }).toEqual({
      status,
      body: { statusCode: status, error, message: expect.any(String) },
    });
    expect(HTTP_CODES).toContain(body.error as string);
    return;
  }
  expect(r.status).toBe(200);
  const list = body[api === 'updates' ? 'documents' : 'entitlements'] as Record<string, unknown>[];
  expect(Object.keys(body)).toEqual([api === 'updates' ? 'documents' : 'entitlements']);
  expect(list).toHaveLength(want.dois.length);
  list.forEach((doc, i) =>
    api === 'updates' ? expectDocument(doc, want.dois[i] as string) : expectEntitlement(doc, want.dois[i], key === KEY),
  );
}

// ---- properties ----

for (const api of ['updates', 'entitlements'] as const) {
  describe(`${api} API`, () => {
    test('any body: the status, error code or answers the model predicts; never a 500', async () => {
      const seen: Record<string, number> = {};
      await fuzz(
        `${api} body`,
        1200,
        fc.asyncProperty(
          bodyArb(api),
          fc.boolean(),
          fc.constantFrom(KEY, KEY_NO_UPDATES),
          async (bytes, staging, key) => {
            const want = modelRequest(api, bytes);
            const r = await post(app, `${staging ? '/staging' : ''}${API_PATHS[api]}`, bytes, { key });
            const outcome = want.status === 200 ? (staging ? 'NOT_CONFIGURED' : 'answered') : want.error;
            seen[outcome] = (seen[outcome] ?? 0) + 1;
            await expectReply(api, r, want, staging, key);
          },
        ),
      );
      console.log('  outcomes:', JSON.stringify(seen));
    });

    test('the byte scanner and the general JSON path give one reply: a body, and the same body behind a BOM', async () => {
      let plain = 0;
      const spans = new Int32Array(2 * MAX_DOIS_PER_REQUEST);
      await fuzz(
        `${api} plain = general`,
        800,
        fc.asyncProperty(bodyArb(api), fc.constantFrom(KEY, KEY_NO_UPDATES), async (bytes, key) => {
          fc.pre(!(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf));
          if (
            (api === 'updates'
              ? scanPlainBody(bytes, spans, 100)
              : scanEntitlementBody(bytes, spans, 100, new Int32Array(2), new Int32Array(100))) >= 0
          )
            plain++;
          const a = await post(app, API_PATHS[api], bytes, { key });
          const b = await post(app, API_PATHS[api], withBom(bytes), { key });
          // an INVALID_JSON message counts its bytes from the body's start, the BOM's three included
          const sansBom = (text: string) =>
            text.replace(/\(byte (\d+)\)/g, (_, n: string) => `(byte ${Number(n) - 3})`);
          expect([b.status, b.headers.get('content-type'), sansBom(await b.text())]).toEqual([
            a.status,
            a.headers.get('content-type'),
            await a.text(),
          ]);
        }),
      );
      console.log(`  bodies the scanner read: ${plain}`);
      expect(plain).toBeGreaterThan(0);
    });

    test('key, media type and size are checked first, in the documented order', async () => {
      const limit = 1024;
      const typeArb = fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json ;x=y',
        'application/jsonx',
        'text/json',
        'application/json-patch+json',
        'text/plain',
        null,
      );
      const sized = fc.oneof(
        bodyArb(api),
        fc
          .tuple(bodyArb(api), fc.integer({ min: 1, max: 3 * limit }))
          .map(([b, pad]) => new Uint8Array(Buffer.concat([b, new Uint8Array(pad).fill(0x20)]))),
      );
      await fuzz(
        `${api} request checks`,
        400,
        fc.asyncProperty(
          sized,
          fc.constantFrom<string | null>(KEY, KEY_NO_UPDATES, 'not-a-key', KEY.toUpperCase(), null),
          typeArb,
          async (bytes, key, type) => {
            const r = await post(small, API_PATHS[api], bytes, { key, contentType: type });
            const mediaOk = type !== null && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
            const want: Expected | { status: number; error: string } =
              key !== KEY && key !== KEY_NO_UPDATES
                ? { status: 401, error: 'UNAUTHORIZED' }
                : !mediaOk
                  ? { status: 415, error: 'UNSUPPORTED_MEDIA_TYPE' }
                  : modelRequest(api, bytes, limit);
            if (want.status === 200) return expectReply(api, r, want as Expected, false, key!);
            expect({ status: r.status, body: await r.json() }).toEqual({
              status: want.status,
              body: { statusCode: want.status, error: (want as { error: string }).error, message: expect.any(String) },
            });
          },
        ),
      );
    });
  });
}

describe('the scanners alone', () => {
  test('a body the scanner reads means exactly what JSON.parse makes of it', async () => {
    const spans = new Int32Array(2 * 100);
    const orgSpan = new Int32Array(2);
    const hashes = new Int32Array(100);
    let read = 0;
    let plainDois = 0;
    await fuzz(
      'plain-body scanners',
      3000,
      fc.property(fc.oneof(bodyArb('updates'), bodyArb('entitlements')), (bytes) => {
        const strings = (n: number) =>
          Array.from({ length: n }, (_, i) => decoder.decode(bytes.subarray(spans[2 * i], spans[2 * i + 1])));
        const n = scanPlainBody(bytes, spans, 100);
        if (n >= 0) {
          read++;
          expect(JSON.parse(decoder.decode(bytes))).toEqual({ dois: strings(n) });
        }
        const m = scanEntitlementBody(bytes, spans, 100, orgSpan, hashes);
        if (m >= 0) {
          // the hash the scanner makes as it reads is the DOI rule's, and NOT_PLAIN for every string not a plain DOI
          for (let i = 0; i < m; i++) expect(hashes[i]).toBe(plainDoiHash(bytes, spans[2 * i]!, spans[2 * i + 1]!));
          for (let i = 0; i < m; i++) if (hashes[i] !== NOT_PLAIN) plainDois++;
          let org: unknown;
          try {
            org = orgSpan[0]! < 0 ? undefined : JSON.parse(decoder.decode(bytes.subarray(orgSpan[0], orgSpan[1])));
          } catch {
            // the org's inside is not checked by the scanner: the route parses it, and takes the general path when it is not JSON
            expect(() => JSON.parse(decoder.decode(bytes))).toThrow();
            return;
          }
          const value = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>;
          expect(value).toEqual(org === undefined ? { dois: strings(m) } : { org, dois: strings(m) });
          expect(Object.keys(value).filter((k) => k === 'org').length).toBe(org === undefined ? 0 : 1);
        }
      }),
    );
    expect(read).toBeGreaterThan(0);
    expect(plainDois).toBeGreaterThan(0);
  });
});
