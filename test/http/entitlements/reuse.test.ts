import { afterAll, beforeAll, expect, test } from 'bun:test';
import { DEFAULT_ENTITLEMENTS, type PlatformSettings } from '../../../src/config/index.ts';
import { Entitlements } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded, tempDir } from '../../support/fixtures.ts';
import { PlatformServer } from '../../support/platform-server.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { importSample, KEY, KEY_NO_UPDATES, makeApp, post } from '../http-support.ts';

/**
 * A request's per-entry state is reused by later requests (entitlement-request.ts, takeEntries): nothing of one
 * request may show in another's answer, whatever came before it and whatever runs beside it. Every body is
 * answered in one order, then in others and many at once (paid DOIs wait for a slow platform meanwhile), and
 * must get the same bytes each time.
 */

const SECRET = 'a-shared-secret-of-the-platform-0123456789';
let dir: ReturnType<typeof tempDir>;
let store: Store;
let platform: PlatformServer;
let app: App;
let withUpdates: string;

function settings(name: string, over: Partial<PlatformSettings> = {}): PlatformSettings {
  return {
    name,
    entitlementTimeoutMs: 2000,
    entitlementConcurrency: 64,
    entitlementBatch: 20,
    entitlementCacheSeconds: 0,
    ...over,
  };
}

beforeAll(async () => {
  platform = new PlatformServer(SECRET);
  // a slow platform: paid entries keep their request waiting while others are answered
  platform.mode = {
    kind: 'answer',
    entitled: (doi) => (doi.endsWith('1') ? 'yes' : 'no'),
    delayMs: 40,
    extra: (doi) => ({ document: `https://paid.example/${doi}` }),
  };
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  const sample = await importSample([store]);
  withUpdates = [...sample.works.values()][0]!.doi;
  store.applyFilesSync([
    preparedFile(
      [
        {
          doi: '10.1000/open-1',
          accessType: 'open',
          vor: [{ url: 'https://oa.example/open-1.pdf', contentType: 'application/pdf' }],
        },
        { doi: '10.1000/open-2', accessType: 'free' },
        { doi: withUpdates, accessType: 'open' },
      ],
      { platform: 'oa' },
    ),
    preparedFile(
      Array.from({ length: 6 }, (_, i) => ({ doi: `10.2000/paid-${i}`, accessType: 'paid' })),
      { platform: 'paid' },
    ),
  ]);
  const entitlements = new Entitlements(
    [settings('oa'), settings('paid', { entitlementUrl: platform.url, entitlementSecret: SECRET })],
    DEFAULT_ENTITLEMENTS,
  );
  app = makeApp({ production: { store } }, { entitlements });
});
afterAll(async () => {
  await platform.stop();
  await store.close();
  dir.remove();
});

/** Bodies that leave different state behind: uids, strings of a parsed body, errors, platform verdicts, updates. */
function bodies(): { body: string; key: string }[] {
  const org = { ipv4: '192.0.2.7' };
  const list = [
    // parsed (object entries): uids, a DOI sent in another form, a non-DOI, an entry without doi, a paid DOI
    {
      org,
      dois: [
        { doi: '10.1000/open-1', uid: 'u-1' },
        { doi: 'https://doi.org/10.2000/paid-1', uid: 'u-2' },
        'not a doi',
        { uid: 'u-4' },
        { doi: withUpdates, uid: 'u-5' },
      ],
    },
    // plain, the same DOIs at the same places: none of the above may show here
    { org, dois: ['10.1000/open-1', '10.2000/paid-1', '10.5555/nobody', '10.1000/open-2', withUpdates] },
    { dois: ['10.1000/open-2'] },
    { org, dois: ['10.2000/paid-2', '10.2000/paid-3', '10.1000/open-1'] },
    {
      org,
      dois: Array.from({ length: 100 }, (_, i) =>
        i % 3 === 0 ? `10.2000/paid-${i % 6}` : i % 3 === 1 ? '10.1000/open-1' : `10.5555/x-${i}`,
      ),
    },
    { dois: ['doi:10.1000/OPEN-1', '10.1000/open-2'] },
  ];
  return list.flatMap((b) => [KEY, KEY_NO_UPDATES].map((key) => ({ body: JSON.stringify(b), key })));
}

async function answer(b: { body: string; key: string }): Promise<string> {
  const r = await post(app, '/v2.2/entitlements', b.body, { key: b.key });
  expect(r.status).toBe(200);
  return r.text();
}

test('an answer does not depend on the requests before it or beside it', async () => {
  const list = bodies();
  const first: string[] = [];
  for (const b of list) first.push(await answer(b));
  // what the parsed body carried (uids, its strings) is absent from the plain body's answer
  const plain = JSON.parse(first[2]!) as { entitlements: Record<string, unknown>[] };
  expect(plain.entitlements.map((e) => [e.doi, e.uid, e.statusCode])).toEqual([
    ['10.1000/open-1', undefined, 200],
    ['10.2000/paid-1', undefined, 200],
    ['10.5555/nobody', undefined, 404],
    ['10.1000/open-2', undefined, 200],
    [withUpdates, undefined, 200],
  ]);
  expect(plain.entitlements[1]).toMatchObject({ entitled: 'yes', source: 'service_request' });
  // in reverse, and in shuffled orders
  for (let i = list.length - 1; i >= 0; i--) expect(await answer(list[i]!)).toBe(first[i]!);
  const rand = seeded(3);
  for (let round = 0; round < 5; round++) {
    const order = list.map((_, i) => i).sort(() => rand() - 0.5);
    for (const i of order) expect(await answer(list[i]!)).toBe(first[i]!);
    // many at once: the paid ones wait on the platform while the open ones are answered
    const all = await Promise.all(order.map((i) => answer(list[i]!)));
    all.forEach((text, k) => expect(text).toBe(first[order[k]!]!));
  }
  expect(platform.calls.length).toBeGreaterThan(0);
});
