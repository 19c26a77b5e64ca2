import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Entitlements, IndexBuilder } from '../../../src/entitlement/index.ts';
import type { App } from '../../../src/http/index.ts';
import { Store } from '../../../src/store/index.ts';
import { seeded, tempDir } from '../../support/fixtures.ts';
import { preparedFile } from '../../support/prepared-file.ts';
import { entitlementsWithoutApi, KEY, makeApp, post } from '../http-support.ts';

/**
 * While the daemon's entitlement index is read in the background, the Entitlement API answers from the store:
 * byte for byte the replies of a complete index, through both body readers. Values here are large (several long
 * links on two platforms), so a request's lookups grow the warming table past its first segment while the request
 * holds records read before (entitlement-request.ts writes an open DOI's links as soon as it is read).
 */

let dir: ReturnType<typeof tempDir>;
let store: Store;
let complete: App;

/** A build that never lands: the index stays warming. */
const never: IndexBuilder = () => ({ done: new Promise(() => {}), cancel: () => {} });

function warmingApp(): { app: App; entitlements: Entitlements } {
  const entitlements = entitlementsWithoutApi();
  entitlements.forStore(store).index.buildInBackground(never, { built: () => {}, failed: () => {} });
  return { app: makeApp({ production: { store } }, { entitlements }), entitlements };
}

beforeAll(() => {
  dir = tempDir();
  store = Store.open(dir.path, 'production', { mapSizeBytes: 1 << 30 });
  const rand = seeded(23);
  const access = ['open', 'free', 'permFree', 'paid', undefined];
  for (const platform of ['acme', 'beta'])
    store.applyFilesSync([
      preparedFile(
        Array.from({ length: 300 }, (_, i) => {
          const doi = `10.7777/Doc.${i}`;
          const a = access[Math.floor(rand() * access.length)];
          const vor = Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, k) => ({
            url: `https://${platform}.example/${'long-path/'.repeat(8)}${doi}/${k}.pdf`,
            contentType: 'application/pdf',
          }));
          return { doi, ...(a ? { accessType: a } : {}), vor };
        }).filter(() => rand() < 0.8),
        { platform },
      ),
    ]);
  complete = makeApp({ production: { store } }, { entitlements: entitlementsWithoutApi() });
});
afterAll(async () => {
  await store.close();
  dir.remove();
});

test('a warming index answers every request as the complete index does, byte for byte', async () => {
  const rand = seeded(29);
  const pick = () => {
    const r = rand();
    if (r < 0.6) return `10.7777/Doc.${Math.floor(rand() * 320)}`;
    if (r < 0.75) return `10.7777/DOC.${Math.floor(rand() * 300)}`;
    if (r < 0.9) return `https://doi.org/10.7777/Doc.${Math.floor(rand() * 300)}`;
    return ['not a doi', '10.5555/unknown.1'][Math.floor(rand() * 2)]!;
  };
  let warming = warmingApp();
  let grown = 0;
  for (let round = 0; round < 40; round++) {
    if (round % 8 === 0) warming = warmingApp(); // an empty table again: the next requests grow it from its first segment
    const dois = Array.from({ length: 1 + Math.floor(rand() * 100) }, pick);
    const plain = JSON.stringify({ org: { ipv4: '192.0.2.7' }, dois });
    for (const body of [plain, plain.replace('"dois"', '"\\u0064ois"')]) {
      const a = await post(complete, '/v2.2/entitlements', body, { key: KEY });
      const index = warming.entitlements.forStore(store).index;
      const bytesBefore = index.memoryBytes;
      const b = await post(warming.app, '/v2.2/entitlements', body, { key: KEY });
      if (index.memoryBytes !== bytesBefore) grown++;
      expect(b.status).toBe(a.status);
      expect(await b.text()).toBe(await a.text());
      expect(index.complete).toBe(false);
    }
  }
  expect(grown).toBeGreaterThanOrEqual(5); // the first request to each new warming app grew its table while it read
});
