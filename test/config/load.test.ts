import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FaultError } from '../../src/base/fault.ts';
import {
  type Config,
  DEFAULT_INGEST,
  loadConfig,
  resolveConfig,
  type S3BucketSettings,
} from '../../src/config/index.ts';
import { tempDir } from '../support/fixtures.ts';

/** docs/design.md, "CLI and configuration": TOML, validated at start-up, every fault with its path, paths relative to the file's folder. */

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('doi-holdings-config-');
});
afterEach(() => dir.remove());

const MINIMAL = `
[buckets.production]
kind = "local"
path = "bucket"

[[platforms]]
name = "acme"
`;

function write(toml: string, name = 'c.toml', sub = ''): string {
  const folder = join(dir.path, sub);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, name);
  writeFileSync(path, toml);
  return path;
}

/** The fault a config load throws; fails the test when it loads. */
function failure(load: () => Config): FaultError {
  try {
    load();
  } catch (e) {
    if (e instanceof FaultError) return e;
    throw e;
  }
  throw new Error('expected the config to be rejected');
}

/** The listed problems of a CONFIG_INVALID fault, one per line, without the heading. */
function problems(e: FaultError): string[] {
  expect(e.code).toBe('CONFIG_INVALID');
  const [, ...rest] = e.message.split('\n');
  return rest.map((l) => l.trim());
}

describe('a valid config', () => {
  test('a minimal file loads with every default applied', () => {
    const path = write(MINIMAL);
    const c = loadConfig(path, {});
    expect(c).toEqual({
      source: path,
      secretNames: [],
      server: { host: '127.0.0.1', port: 8080, maxBodyBytes: 65536, bodyTimeoutMs: 10_000, drainMs: 5000 },
      store: { dir: join(dir.path, 'var/db'), mapSizeBytes: 64 * 1024 ** 3, changeFeedKeepMs: 90 * 86_400_000 },
      ingest: {
        maxDecompressedBytes: 64 * 1024 * 1024,
        maxTries: 5,
        retryBaseMs: 500,
        settleMs: 200,
        rescanSeconds: 60,
        passFiles: 100,
        sortedPassFiles: 101,
        passChunkRecords: 250_000,
        parseWorkers: 2,
      },
      buckets: { production: { kind: 'local', path: join(dir.path, 'bucket') } },
      platforms: [
        {
          name: 'acme',
          entitlementUrl: undefined,
          entitlementSecret: undefined,
          entitlementTimeoutMs: 1000,
          entitlementConcurrency: 32,
          entitlementBatch: 20,
          entitlementCacheSeconds: 0,
        },
      ],
      integrators: [],
      entitlements: {
        name: 'doi-holdings',
        cacheMaxEntries: 100_000,
        cacheMaxBytes: 128 * 1024 * 1024,
        breakerFailures: 5,
        breakerCooldownMs: 30_000,
      },
      updates: { dropDir: undefined, nice: 10, urls: [], crossref: [] },
      webhooks: {
        enabled: false,
        path: join(dir.path, 'var/webhooks'),
        servedBy: undefined,
        allowHttp: false,
        allowPrivateTargets: false,
        concurrency: 64,
        perIntegratorConcurrency: 8,
        maxSubscriptionsPerIntegrator: 100,
        timeoutMs: 10_000,
        retryBaseMs: 5_000,
        retryMaxMs: 3_600_000,
        retryForMs: 72 * 3_600_000,
        pollMs: 500,
        mapSizeBytes: 64 * 1024 ** 3,
        keepEventsMs: 30 * 86_400_000,
        nice: 19,
        idle: true,
      },
    });
    expect(c.ingest).toEqual(DEFAULT_INGEST);
  });

  test('given values override the defaults; unset ingest fields keep theirs', () => {
    const path = write(`
[server]
listen = "0.0.0.0:9090"
maxBodyBytes = 2048
bodyTimeoutMs = 2500
drainSeconds = 1.5

[store]
dir = "data/db"
mapSizeGiB = 0.5

[ingest]
maxDecompressedBytes = 1048576
maxTries = 2

${MINIMAL}
entitlementUrl = "https://acme.example/entitlements"
entitlementSecretEnv = "ACME_SECRET"
entitlementTimeoutMs = 500
entitlementConcurrency = 4
entitlementBatch = 10
entitlementCacheSeconds = 60

[[platforms]]
name = "beta.press_2"

[[integrators]]
name = "tool"
apiKey = "0123456789"
updates = true

[[integrators]]
name = "other"
apiKey = "abcdefghij"
cache = false

[entitlements]
name = "holdings.example.org"
cacheMaxEntries = 500
cacheMaxBytes = 2097152
breakerFailures = 3
breakerCooldownSeconds = 2.5

[updates]
dropDir = "drop"
changeFeedKeepDays = 30
urls = [
  { url = "https://rw.example/rw.csv", format = "retraction-watch-csv" },
  { url = "http://cr.example/works.json", format = "crossref-json", everyMinutes = 0.5, staleAfterHours = 3 },
]

[[updates.crossref]]
name = "plus"
url = "http://127.0.0.1:9/"
mailto = "ops@example.org"
plusTokenEnv = "CR_PLUS"
everyMinutes = 15
from = "2024-01-31"
rows = 500
fullEveryDays = 1
staleAfterHours = 0.5
nice = 0
idle = false
`);
    const c = loadConfig(path, { ACME_SECRET: 's3cret', CR_PLUS: 'tok' });
    expect(c.server).toEqual({ host: '0.0.0.0', port: 9090, maxBodyBytes: 2048, bodyTimeoutMs: 2500, drainMs: 1500 });
    expect(c.store).toEqual({
      dir: join(dir.path, 'data/db'),
      mapSizeBytes: 512 * 1024 ** 2,
      changeFeedKeepMs: 30 * 86_400_000,
    });
    expect(c.ingest).toEqual({
      maxDecompressedBytes: 1048576,
      maxTries: 2,
      retryBaseMs: 500,
      settleMs: 200,
      rescanSeconds: 60,
      passFiles: 100,
      sortedPassFiles: 101,
      passChunkRecords: 250_000,
      parseWorkers: 2,
    });
    expect(c.platforms).toEqual([
      {
        name: 'acme',
        entitlementUrl: 'https://acme.example/entitlements',
        entitlementSecret: 's3cret',
        entitlementTimeoutMs: 500,
        entitlementConcurrency: 4,
        entitlementBatch: 10,
        entitlementCacheSeconds: 60,
      },
      {
        name: 'beta.press_2',
        entitlementUrl: undefined,
        entitlementSecret: undefined,
        entitlementTimeoutMs: 1000,
        entitlementConcurrency: 32,
        entitlementBatch: 20,
        entitlementCacheSeconds: 0,
      },
    ]);
    expect(c.entitlements).toEqual({
      name: 'holdings.example.org',
      cacheMaxEntries: 500,
      cacheMaxBytes: 2 * 1024 * 1024,
      breakerFailures: 3,
      breakerCooldownMs: 2500,
    });
    expect(c.integrators).toEqual([
      { name: 'tool', apiKey: '0123456789', updates: true, cache: true, counter: false },
      { name: 'other', apiKey: 'abcdefghij', updates: false, cache: false, counter: false },
    ]);
    expect(c.updates).toEqual({
      dropDir: join(dir.path, 'drop'),
      nice: 10,
      urls: [
        {
          url: 'https://rw.example/rw.csv',
          format: 'retraction-watch-csv',
          everyMs: 1440 * 60_000,
          staleAfterMs: (2 * 1440 + 60) * 60_000,
        },
        { url: 'http://cr.example/works.json', format: 'crossref-json', everyMs: 30_000, staleAfterMs: 3 * 3600_000 },
      ],
      crossref: [
        {
          name: 'plus',
          url: 'http://127.0.0.1:9',
          mailto: 'ops@example.org',
          plusToken: 'tok',
          plusTokenEnv: 'CR_PLUS',
          everyMs: 15 * 60_000,
          from: '2024-01-31',
          rows: 500,
          fullEveryMs: 86_400_000,
          staleAfterMs: 1800_000,
          nice: 0,
          idle: false,
        },
      ],
    });
    // a harvest's defaults
    const minimal = write(`${MINIMAL}\n[[updates.crossref]]\nmailto = "ops@example.org"\n`);
    expect(loadConfig(minimal, {}).updates.crossref).toEqual([
      {
        name: 'crossref',
        url: 'https://api.crossref.org',
        mailto: 'ops@example.org',
        everyMs: 3600_000,
        rows: 1000,
        fullEveryMs: 7 * 86_400_000,
        staleAfterMs: 3 * 3600_000,
        nice: 19,
        idle: true,
      },
    ]);
  });

  test('the shipped example configs load', () => {
    const env = {
      DOI_HOLDINGS_S3_KEY_ID: 'id',
      DOI_HOLDINGS_S3_SECRET: 'secret',
      DOI_HOLDINGS_KEY_DISCOVERY: 'discovery-key',
      DOI_HOLDINGS_KEY_USAGE: 'usage-reports-key',
      DOI_HOLDINGS_ACME_JWT_SECRET: 'acme-secret',
    };
    const repo = join(import.meta.dir, '..', '..');
    // its secrets file sits beside it (/etc/doi-holdings/secrets.env when installed)
    const copy = write(readFileSync(join(repo, 'conf/doi-holdings.toml'), 'utf8'), 'doi-holdings.toml', 'etc');
    write(
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
      'secrets.env',
      'etc',
    );
    const prod = loadConfig(copy, {});
    expect(prod.buckets.production.kind).toBe('s3');
    expect(prod.integrators).toEqual([
      { name: 'discovery-tool', apiKey: 'discovery-key', updates: true, cache: true, counter: false },
      { name: 'usage-reports', apiKey: 'usage-reports-key', updates: false, cache: true, counter: true },
    ]);
    expect(prod.platforms[0]).toMatchObject({
      name: 'acme',
      entitlementUrl: expect.stringMatching(/^https:/),
      entitlementSecret: 'acme-secret',
    });
    const def = loadConfig(join(repo, 'conf/default.toml'), {});
    expect(def.buckets.production).toEqual({ kind: 'local', path: join(repo, 'var/bucket') });
  });
});

describe('relative paths resolve against the config file folder', () => {
  test('relative, parent-relative and absolute paths', () => {
    const abs = join(dir.path, 'elsewhere', 'staging');
    const path = write(
      `
[store]
dir = "../db"

[buckets.production]
kind = "local"
path = "./bucket/prod"

[buckets.staging]
kind = "local"
path = ${JSON.stringify(abs)}

[[platforms]]
name = "acme"

[updates]
dropDir = "updates"
`,
      'c.toml',
      'etc/conf',
    );
    const c = loadConfig(path, {});
    expect(c.source).toBe(path);
    expect(c.store.dir).toBe(join(dir.path, 'etc', 'db'));
    expect(c.buckets.production).toEqual({ kind: 'local', path: join(dir.path, 'etc/conf/bucket/prod') });
    expect(c.buckets.staging).toEqual({ kind: 'local', path: abs });
    expect(c.updates.dropDir).toBe(join(dir.path, 'etc/conf/updates'));
  });

  test('not against the working directory, even when the config path itself is relative', () => {
    const path = write(MINIMAL, 'rel.toml', 'a/b');
    const rel = relative(process.cwd(), path);
    expect(rel.startsWith('/')).toBe(false);
    const c = loadConfig(rel, {});
    expect(c.source).toBe(path);
    expect(c.buckets.production.path).toBe(join(dir.path, 'a/b/bucket'));
    expect(c.store.dir).toBe(join(dir.path, 'a/b/var/db'));
  });

  test('the S3 mirror folder is resolved too', () => {
    const path = write(`
[buckets.production]
kind = "s3"
path = "mirror"
bucket = "deposits"

[[platforms]]
name = "acme"
`);
    expect(loadConfig(path, {}).buckets.production.path).toBe(join(dir.path, 'mirror'));
  });

  test('staging may not share the production folder, also when one is given relative and the other absolute', () => {
    const same = write(`
[buckets.production]
kind = "local"
path = "bucket"

[buckets.staging]
kind = "local"
path = ${JSON.stringify(join(dir.path, 'bucket'))}

[[platforms]]
name = "acme"
`);
    const sameFolder = `/buckets/staging/path: staging's folder ${join(dir.path, 'bucket')} and production's ${join(dir.path, 'bucket')} are the same folder: each environment needs a folder of its own`;
    expect(problems(failure(() => loadConfig(same, {})))).toEqual([sameFolder]);
    const alsoSame = write(
      MINIMAL.replace('path = "bucket"', 'path = "x/../bucket"') +
        '\n[buckets.staging]\nkind = "local"\npath = "./bucket/"\n',
      'd.toml',
    );
    expect(problems(failure(() => loadConfig(alsoSame, {})))).toEqual([sameFolder]);
  });

  test('nor a folder inside it, or one that holds it, nor the same folder through a symbolic link', () => {
    const staging = (path: string) =>
      write(`${MINIMAL}\n[buckets.staging]\nkind = "local"\npath = ${JSON.stringify(path)}\n`, 'e.toml');
    const nested = `are one inside the other: each environment needs a folder of its own`;
    expect(problems(failure(() => loadConfig(staging('bucket/staging'), {})))[0]).toEndWith(nested);
    expect(problems(failure(() => loadConfig(staging('.'), {})))[0]).toEndWith(nested);
    mkdirSync(join(dir.path, 'bucket'), { recursive: true });
    symlinkSync(join(dir.path, 'bucket'), join(dir.path, 'link'));
    expect(problems(failure(() => loadConfig(staging('link'), {})))[0]).toEndWith(
      'are the same folder: each environment needs a folder of its own',
    );
    // side by side, or a name that only starts the same, is apart
    expect(loadConfig(staging('bucket-staging'), {}).buckets.staging!.path).toBe(join(dir.path, 'bucket-staging'));
  });

  test('two S3 buckets with the same name and endpoint need prefixes apart', () => {
    const endpoint = (e: string | undefined) => (e === undefined ? '' : `endpoint = "${e}"`);
    const s3 = (
      prodPrefix: string,
      stagingPrefix: string,
      stagingBucket = 'deposits',
      prodEndpoint?: string,
      stagingEndpoint?: string,
    ) =>
      write(
        `
[buckets.production]
kind = "s3"
path = "mirror"
bucket = "deposits"
prefix = "${prodPrefix}"
${endpoint(prodEndpoint)}

[buckets.staging]
kind = "s3"
path = "staging-mirror"
bucket = "${stagingBucket}"
prefix = "${stagingPrefix}"
${endpoint(stagingEndpoint)}

[[platforms]]
name = "acme"
`,
        'f.toml',
      );
    expect(problems(failure(() => loadConfig(s3('', 'staging'), {})))).toEqual([
      '/buckets/staging/prefix: staging and production read the same objects of S3 bucket deposits (prefixes "" and "staging/" overlap): give each its own bucket or prefixes apart',
    ]);
    expect(problems(failure(() => loadConfig(s3('/live/', 'live'), {})))[0]).toContain(
      '(prefixes "live/" and "live/" overlap)',
    );
    expect(loadConfig(s3('live', 'live-trial'), {}).buckets.staging!.kind).toBe('s3');
    expect(loadConfig(s3('', '', 'trial-deposits'), {}).buckets.staging!.kind).toBe('s3');
    // the same service written two ways is one: AWS with or without a regional endpoint (bucket names are global
    // there), another server whatever the letter case, scheme, default port or trailing slash
    const same = (a: string | undefined, b: string | undefined) =>
      problems(failure(() => loadConfig(s3('', '', 'deposits', a, b), {})))[0];
    expect(same(undefined, 'https://s3.eu-west-1.amazonaws.com')).toContain(
      'read the same objects of S3 bucket deposits',
    );
    expect(same('https://s3.us-east-1.amazonaws.com/', 'https://s3.eu-west-1.amazonaws.com')).toContain(
      'read the same objects',
    );
    expect(same('https://MinIO.example:9000/', 'http://minio.example:9000')).toContain('read the same objects');
    expect(same('https://minio.example', 'https://minio.example:443')).toContain('read the same objects');
    // two servers are two services, however their buckets are named
    expect(
      loadConfig(s3('', '', 'deposits', 'https://minio-a.example', 'https://minio-b.example'), {}).buckets.staging!
        .kind,
    ).toBe('s3');
    expect(loadConfig(s3('', '', 'deposits', undefined, 'https://minio.example'), {}).buckets.staging!.kind).toBe('s3');
  });
});

describe('a bad config lists every fault by path', () => {
  test('[webhooks] retry waits are bounded by the longest timer (2^31 - 1 ms): longer ones would fire at once', () => {
    const over = write(`${MINIMAL}\n[webhooks]\nretryMaxMs = 2147483648\n`);
    expect(problems(failure(() => loadConfig(over, {})))[0]).toStartWith('/webhooks/retryMaxMs');
    const longest = write(`${MINIMAL}\n[webhooks]\nretryMaxMs = 2147483647\n`, 'e.toml');
    expect(loadConfig(longest, {}).webhooks!.retryMaxMs).toBe(2 ** 31 - 1);
  });

  test('several schema faults at once', () => {
    const path = write(`
[server]
listen = "localhost"
maxBodyBytes = 10

[store]
mapSizeGiB = 0

[ingest]
maxTries = 0
settleMs = -1

[buckets.production]
kind = "local"
path = ""

[[platforms]]
name = "Acme Press"

[[integrators]]
name = "tool"
apiKey = "short"
updates = "yes"

[updates]
urls = [{ url = "ftp://x.example/rw.csv", format = "csv" }]
`);
    const e = failure(() => loadConfig(path, {}));
    expect(e).toBeInstanceOf(FaultError);
    expect(e.message.split('\n')[0]).toBe(`config ${path} is invalid:`);
    expect(problems(e)).toEqual([
      "/server/listen: Expected string to match '^[^:]+:[0-9]{1,5}$'",
      '/server/maxBodyBytes: Expected integer to be greater or equal to 1024',
      '/store/mapSizeGiB: Expected number to be greater than 0',
      '/ingest/maxTries: Expected integer to be greater or equal to 1',
      '/ingest/settleMs: Expected integer to be greater or equal to 0',
      '/buckets/production/path: Expected string length greater or equal to 1',
      "/platforms/0/name: Expected string to match '^[a-z0-9][a-z0-9._-]{0,63}$'",
      '/integrators/0/apiKey: Expected string length greater or equal to 8',
      '/integrators/0/updates: Expected boolean',
      "/updates/urls/0/url: Expected string to match '^https?://'",
      '/updates/urls/0/format: Expected union value',
    ]);
  });

  test('required sections missing', () => {
    const path = write('[server]\nlisten = "127.0.0.1:8080"\n');
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/buckets: Expected required property',
      '/platforms: Expected required property',
      '/buckets: Expected object',
      '/platforms: Expected array',
    ]);
  });

  test('at least one platform', () => {
    const path = write(`platforms = []\n${MINIMAL.replace('[[platforms]]\nname = "acme"', '')}`);
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/platforms: Expected array length to be greater or equal to 1',
    ]);
  });

  test('unknown keys are rejected wherever they appear', () => {
    const path = write(`
colour = "blue"

[server]
listen = "127.0.0.1:8080"
port = 8080

[buckets.production]
kind = "local"
path = "bucket"
watch = true

[buckets.test]
kind = "local"
path = "test-bucket"

[[platforms]]
name = "acme"
entitlementURL = "https://acme.example"

[[integrators]]
name = "tool"
apiKey = "0123456789"
feature = "updates"

[updates]
dropdir = "drop"
`);
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/colour: Unexpected property',
      '/server/port: Unexpected property',
      '/buckets/test: Unexpected property',
      '/buckets/production/watch: Unexpected property',
      '/platforms/0/entitlementURL: Unexpected property',
      '/integrators/0/feature: Unexpected property',
      '/updates/dropdir: Unexpected property',
    ]);
  });

  test('semantic faults (duplicates, either/or, port range) are listed together', () => {
    const path = write(`
[server]
listen = "127.0.0.1:70000"

${MINIMAL}

[[platforms]]
name = "acme"

[[integrators]]
name = "one"
apiKey = "same-key-123"

[[integrators]]
name = "one"
apiKey = "same-key-123"

[[integrators]]
name = "both"
apiKey = "0123456789"
apiKeyEnv = "BOTH_KEY"

[[integrators]]
name = "neither"
`);
    expect(problems(failure(() => loadConfig(path, { BOTH_KEY: '0123456789' })))).toEqual([
      '/platforms/1/name: platform "acme" is registered twice',
      '/integrators/1/name: integrator "one" is configured twice',
      '/integrators/1: the same API key is given to two integrators',
      '/integrators/2: give exactly one of apiKey or apiKeyEnv',
      '/integrators/3: give exactly one of apiKey or apiKeyEnv',
      '/server/listen: port 70000 is out of range',
    ]);
  });

  test('[entitlements.lookup]: defaults, the base address trimmed, the Plus token read; each fault named', () => {
    const path = write(`
${MINIMAL}

[entitlements.lookup]
url = "https://api.example.org/"
mailto = "ops@example.org"
plusTokenEnv = "CR_PLUS"
`);
    expect(loadConfig(path, { CR_PLUS: 'tok' }).entitlements.lookup).toEqual({
      url: 'https://api.example.org',
      mailto: 'ops@example.org',
      plusToken: 'tok',
      plusTokenEnv: 'CR_PLUS',
      timeoutMs: 1000,
      concurrency: 16,
      cacheEntries: 100_000,
    });
    expect(loadConfig(write(MINIMAL, 'none.toml'), {}).entitlements.lookup).toBeUndefined();
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/entitlements/lookup/plusTokenEnv: environment variable CR_PLUS is not set or empty',
    ]);
    const bad = write(`
${MINIMAL}

[entitlements.lookup]
mailto = "nobody"
timeoutMs = 10
concurrency = 0
cacheEntries = -1
`);
    const listed = problems(failure(() => loadConfig(bad, {})));
    for (const field of ['mailto', 'timeoutMs', 'concurrency', 'cacheEntries'])
      expect(listed.some((p) => p.startsWith(`/entitlements/lookup/${field}:`))).toBe(true);
  });

  test('Crossref harvests: more than one (they share one feed), a date that is no date, an unset Plus token variable, a bad mailto', () => {
    const path = write(`
${MINIMAL}

[[updates.crossref]]
mailto = "ops@example.org"
from = "2024-02-31x"

[[updates.crossref]]
mailto = "ops@example.org"
plusTokenEnv = "NO_SUCH_TOKEN"
from = "2024-13-45"

[[updates.crossref]]
name = "other"
mailto = "not-an-address"
rows = 1001
everyMinutes = 40000
nice = 20
idle = "yes"
`);
    const listed = problems(failure(() => loadConfig(path, {})));
    expect(listed.some((p) => p.startsWith('/updates/crossref/0/from:'))).toBe(true);
    expect(listed.some((p) => p.startsWith('/updates/crossref/2/mailto:'))).toBe(true);
    expect(listed.some((p) => p.startsWith('/updates/crossref/2/rows:'))).toBe(true);
    // longer than a timer can wait (2^31-1 ms): it would fire every millisecond
    expect(listed.some((p) => p.startsWith('/updates/crossref/2/everyMinutes:'))).toBe(true);
    expect(listed.some((p) => p.startsWith('/updates/crossref/2/nice:'))).toBe(true);
    expect(listed.some((p) => p.startsWith('/updates/crossref/2/idle:'))).toBe(true);
    const fixed = write(`
${MINIMAL}

[[updates.crossref]]
mailto = "ops@example.org"

[[updates.crossref]]
mailto = "ops@example.org"
plusTokenEnv = "NO_SUCH_TOKEN"
from = "2024-13-45"
`);
    expect(problems(failure(() => loadConfig(fixed, {})))).toEqual([
      '/updates/crossref/1: only one Crossref harvest may be configured (found 2): harvests share one feed, so a full run of one would withdraw the updates only another brought',
      '/updates/crossref/1/from: 2024-13-45 is not a date',
      '/updates/crossref/1/plusTokenEnv: environment variable NO_SUCH_TOKEN is not set or empty',
    ]);
    // a day the month does not have is no date either (Date.parse would roll it over), a leap day is
    for (const [from, ok] of [
      ['2020-02-30', false],
      ['2023-02-29', false],
      ['2024-04-31', false],
      ['2024-02-29', true],
      ['2024-12-31', true],
    ] as const) {
      const one = write(`${MINIMAL}\n[[updates.crossref]]\nmailto = "ops@example.org"\nfrom = "${from}"\n`);
      if (ok) expect(loadConfig(one, {}).updates.crossref[0]!.from).toBe(from);
      else
        expect(problems(failure(() => loadConfig(one, {})))).toEqual([
          `/updates/crossref/0/from: ${from} is not a date`,
        ]);
    }
  });

  test('an integrator name that is no header value (a control character, a space at an end) is refused: it is sent as x-integrator-id', () => {
    const path = write(`${MINIMAL}
[[integrators]]
name = "line\\r\\nbreak"
apiKey = "key-of-one-123"

[[integrators]]
name = "nul\\u0000"
apiKey = "key-of-two-123"

[[integrators]]
name = " leading"
apiKey = "key-of-three-123"

[[integrators]]
name = "Acme Library"
apiKey = "key-of-four-123"
`);
    const because =
      "Expected string to match '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$' (printable ASCII, spaces only between words)";
    expect(problems(failure(() => loadConfig(path, {})))).toEqual(
      [0, 1, 2].map((i) => `/integrators/${i}/name: ${because}`),
    );
    const fine = loadConfig(
      write(
        `${MINIMAL}\n[[integrators]]\nname = "Acme Library"\napiKey = "key-of-four-123"\n\n[[integrators]]\nname = "fine-name_1.0"\napiKey = "key-of-five-123"\n`,
      ),
      {},
    );
    expect(fine.integrators.map((i) => i.name)).toEqual(['Acme Library', 'fine-name_1.0']);
  });

  test('[[integrators]] counter: false unless set; with cache = true it is refused, the two cannot both hold', () => {
    const c = loadConfig(
      write(
        `${MINIMAL}\n[[integrators]]\nname = "plain"\napiKey = "key-of-plain-1"\n\n[[integrators]]\nname = "usage"\napiKey = "key-of-usage-1"\ncounter = true\n\n[[integrators]]\nname = "usage-too"\napiKey = "key-of-usage-2"\ncounter = true\ncache = false\n`,
      ),
      {},
    );
    expect(c.integrators.map((i) => [i.name, i.counter, i.cache])).toEqual([
      ['plain', false, true],
      ['usage', true, true],
      ['usage-too', true, false],
    ]);
    const both = `${MINIMAL}\n[[integrators]]\nname = "usage"\napiKey = "key-of-usage-1"\ncounter = true\ncache = true\n`;
    expect(problems(failure(() => loadConfig(write(both), {})))).toEqual([
      '/integrators/0/cache: a counter integrator is never served from the answer cache; leave cache out, or false',
    ]);
    expect(
      problems(
        failure(() =>
          loadConfig(
            write(`${MINIMAL}\n[[integrators]]\nname = "u"\napiKey = "key-of-usage-1"\ncounter = "yes"\n`),
            {},
          ),
        ),
      )[0],
    ).toStartWith('/integrators/0/counter: ');
  });

  test('[entitlements] userAgent: the user-agent of platform calls, when a platform expects another than "<name> Entitlement API"', () => {
    const named = loadConfig(
      write(`${MINIMAL}\n[entitlements]\nname = "getftr"\nuserAgent = "GetFT Entitlement API"\n`),
      {},
    );
    expect(named.entitlements).toMatchObject({ name: 'getftr', userAgent: 'GetFT Entitlement API' });
    expect(loadConfig(write(MINIMAL), {}).entitlements.userAgent).toBeUndefined();
    for (const bad of [' GetFT', 'GetFT ', 'Get\\tFT', ''])
      expect(
        problems(failure(() => loadConfig(write(`${MINIMAL}\n[entitlements]\nuserAgent = "${bad}"\n`), {})))[0],
      ).toStartWith('/entitlements/userAgent: ');
  });

  test('a file that is not TOML', () => {
    const path = write('[buckets.production\nkind = local\n');
    const e = failure(() => loadConfig(path, {}));
    expect(e.code).toBe('CONFIG_NOT_TOML');
    expect(e.message.startsWith(`config ${path}: not valid TOML: `)).toBe(true);
  });

  test('a file that cannot be read', () => {
    const path = join(dir.path, 'missing.toml');
    const e = failure(() => loadConfig(path, {}));
    expect(e.code).toBe('CONFIG_UNREADABLE');
    expect(e.message.startsWith(`config ${path}: cannot read: `)).toBe(true);
  });

  test('resolveConfig validates a parsed value the same way', () => {
    const e = failure(() =>
      resolveConfig(
        { buckets: { production: { kind: 'local', path: 'b' } }, platforms: [{ name: 'acme', x: 1 }] },
        '/etc/x.toml',
        {},
      ),
    );
    expect(e.message).toBe('config /etc/x.toml is invalid:\n  /platforms/0/x: Unexpected property');
    expect(() => resolveConfig(null, '/etc/x.toml', {})).toThrow(FaultError);
  });
});

describe('secrets come from the env argument, only required when asked', () => {
  const WITH_ENV_KEY = `${MINIMAL}
[[integrators]]
name = "env-tool"
apiKeyEnv = "TOOL_KEY"
updates = true

[[integrators]]
name = "inline"
apiKey = "inline-key-1"
`;

  test('apiKeyEnv is read from the env given', () => {
    const c = loadConfig(write(WITH_ENV_KEY), { TOOL_KEY: 'from-the-env-1' });
    expect(c.integrators).toEqual([
      { name: 'env-tool', apiKey: 'from-the-env-1', updates: true, cache: true, counter: false },
      { name: 'inline', apiKey: 'inline-key-1', updates: false, cache: true, counter: false },
    ]);
  });

  test('an unset apiKeyEnv is a fault when secrets are required (the default)', () => {
    const path = write(WITH_ENV_KEY);
    const expected = ['/integrators/0/apiKeyEnv: environment variable TOOL_KEY is not set'];
    expect(problems(failure(() => loadConfig(path, {})))).toEqual(expected);
    expect(problems(failure(() => loadConfig(path, {}, { requireSecrets: true })))).toEqual(expected);
  });

  test('process.env is not consulted', () => {
    const path = write(WITH_ENV_KEY);
    process.env.TOOL_KEY = 'from-process-env';
    try {
      expect(problems(failure(() => loadConfig(path, {})))).toEqual([
        '/integrators/0/apiKeyEnv: environment variable TOOL_KEY is not set',
      ]);
      expect(loadConfig(path, {}, { requireSecrets: false }).integrators.map((i) => i.name)).toEqual(['inline']);
    } finally {
      delete process.env.TOOL_KEY;
    }
  });

  test('without required secrets an unset apiKeyEnv is allowed and that integrator is left out', () => {
    const c = loadConfig(write(WITH_ENV_KEY), {}, { requireSecrets: false });
    expect(c.integrators).toEqual([
      { name: 'inline', apiKey: 'inline-key-1', updates: false, cache: true, counter: false },
    ]);
  });

  test('a key from the env that is too short or shared is a fault even without required secrets', () => {
    const path = write(WITH_ENV_KEY);
    expect(problems(failure(() => loadConfig(path, { TOOL_KEY: 'short' }, { requireSecrets: false })))).toEqual([
      '/integrators/0/apiKeyEnv: the key in TOOL_KEY is shorter than 8 characters',
    ]);
    expect(problems(failure(() => loadConfig(path, { TOOL_KEY: 'inline-key-1' })))).toEqual([
      '/integrators/1: the same API key is given to two integrators',
    ]);
  });

  test('a platform entitlementSecretEnv is required only when secrets are', () => {
    const path = write(`${MINIMAL}entitlementUrl = "https://acme.example/e"\nentitlementSecretEnv = "ACME_SECRET"\n`);
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/platforms/0/entitlementSecretEnv: environment variable ACME_SECRET is not set or empty',
    ]);
    expect(problems(failure(() => loadConfig(path, { ACME_SECRET: '' })))).toEqual([
      '/platforms/0/entitlementSecretEnv: environment variable ACME_SECRET is not set or empty',
    ]);
    expect(loadConfig(path, {}, { requireSecrets: false }).platforms[0]!.entitlementSecret).toBeUndefined();
    expect(loadConfig(path, { ACME_SECRET: 'xyz' }).platforms[0]!.entitlementSecret).toBe('xyz');
  });

  test('a variable named like a member of every JS object (constructor, __proto__) is a variable like any other', () => {
    const path = write(`${MINIMAL}entitlementUrl = "https://acme.example/e"\nentitlementSecretEnv = "constructor"\n`);
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/platforms/0/entitlementSecretEnv: environment variable constructor is not set or empty',
    ]);
    expect(
      loadConfig(path, { constructor: 'from-env' } as Record<string, string>).platforms[0]!.entitlementSecret,
    ).toBe('from-env');
    write('__proto__=from-file-123\n', 'proto.env');
    const viaFile = write(
      `secretsFile = "proto.env"\n${MINIMAL}entitlementUrl = "https://acme.example/e"\nentitlementSecretEnv = "__proto__"\n`,
    );
    expect(loadConfig(viaFile, {}).platforms[0]!.entitlementSecret).toBe('from-file-123');
  });

  test('a platform Entitlement API needs both its URL and its JWT secret variable', () => {
    expect(
      problems(failure(() => loadConfig(write(`${MINIMAL}entitlementUrl = "https://acme.example/e"\n`), {}))),
    ).toEqual([
      "/platforms/0/entitlementSecretEnv: required with entitlementUrl (the JWT shared secret's environment variable)",
    ]);
    expect(
      problems(
        failure(() => loadConfig(write(`${MINIMAL}entitlementSecretEnv = "ACME_SECRET"\n`), { ACME_SECRET: 'x' })),
      ),
    ).toEqual(['/platforms/0/entitlementUrl: entitlementSecretEnv is given but no entitlementUrl to call']);
    const bad = write(
      `${MINIMAL}entitlementBatch = 0\nentitlementCacheSeconds = -1\n\n[entitlements]\nname = "has space"\nsurprise = 1\n`,
    );
    expect(problems(failure(() => loadConfig(bad, {})))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/platforms\/0\/entitlementBatch: /),
        expect.stringMatching(/^\/platforms\/0\/entitlementCacheSeconds: /),
        expect.stringMatching(/^\/entitlements\/name: /),
        expect.stringMatching(/^\/entitlements\/surprise: /),
      ]),
    );
  });
});

describe('an S3 bucket block', () => {
  const s3 = (fields: string, env: 'production' | 'staging' = 'production') =>
    (env === 'production'
      ? `[buckets.production]\n${fields}\n`
      : `[buckets.production]\nkind = "local"\npath = "bucket"\n\n[buckets.staging]\n${fields}\n`) +
    '\n[[platforms]]\nname = "acme"\n';

  test('a full block resolves with credentials from the env', () => {
    const path = write(
      s3(`kind = "s3"
path = "mirror/prod"
endpoint = "http://127.0.0.1:4568"
region = "eu-west-1"
bucket = "deposits"
prefix = "/holdings/in/"
forcePathStyle = true
accessKeyIdEnv = "KEY_ID"
secretAccessKeyEnv = "SECRET"
pollSeconds = 2.5`),
    );
    const b = loadConfig(path, { KEY_ID: 'AKIA', SECRET: 'shh' }).buckets.production as S3BucketSettings;
    expect(b).toEqual({
      kind: 's3',
      path: join(dir.path, 'mirror/prod'),
      endpoint: 'http://127.0.0.1:4568',
      region: 'eu-west-1',
      bucket: 'deposits',
      prefix: 'holdings/in/',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'shh' },
      credentialSource: 'KEY_ID/SECRET',
      pollMs: 2500,
    });
  });

  test('a minimal block gets defaults: region us-east-1, no prefix, default credential chain, 30 s polling', () => {
    const b = loadConfig(write(s3('kind = "s3"\npath = "mirror"\nbucket = "deposits"')), {}).buckets
      .production as S3BucketSettings;
    expect(b).toEqual({
      kind: 's3',
      path: join(dir.path, 'mirror'),
      endpoint: undefined,
      region: 'us-east-1',
      bucket: 'deposits',
      prefix: '',
      forcePathStyle: false,
      credentials: undefined,
      credentialSource: 'the default AWS credential chain',
      pollMs: 30_000,
    });
  });

  test('prefixes are normalised to "" or "<prefix>/"', () => {
    for (const [given, want] of [
      ['', ''],
      ['/', ''],
      ['in', 'in/'],
      ['in/', 'in/'],
      ['//a/b//', 'a/b/'],
    ] as const) {
      const b = loadConfig(
        write(s3(`kind = "s3"\npath = "m"\nbucket = "deposits"\nprefix = ${JSON.stringify(given)}`)),
        {},
      ).buckets.production as S3BucketSettings;
      expect(b.prefix).toBe(want);
    }
  });

  test('each field fault of the block is listed by path', () => {
    const path = write(
      s3(`kind = "s3"
path = "mirror"
endpoint = "s3.example.com"
region = ""
bucket = "ab"
forcePathStyle = "yes"
pollSeconds = 0
acl = "private"`),
    );
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/buckets/production/acl: Unexpected property',
      "/buckets/production/endpoint: Expected string to match '^https?://'",
      '/buckets/production/region: Expected string length greater or equal to 1',
      '/buckets/production/bucket: Expected string length greater or equal to 3',
      '/buckets/production/forcePathStyle: Expected boolean',
      '/buckets/production/pollSeconds: Expected number to be greater than 0',
    ]);
  });

  test('a staging S3 block is validated the same way', () => {
    const path = write(s3('kind = "s3"\npath = "mirror-staging"\npollSeconds = 100000', 'staging'));
    expect(problems(failure(() => loadConfig(path, {})))).toEqual([
      '/buckets/staging/bucket: Expected required property',
      '/buckets/staging/bucket: Expected string',
      '/buckets/staging/pollSeconds: Expected number to be less or equal to 86400',
    ]);
  });

  test('S3-only fields are not allowed on a local bucket, and the kind must be known', () => {
    const local = write(s3('kind = "local"\npath = "bucket"\nbucket = "deposits"'));
    expect(problems(failure(() => loadConfig(local, {})))).toEqual(['/buckets/production/bucket: Unexpected property']);
    const gcs = write(s3('kind = "gcs"\npath = "bucket"'), 'gcs.toml');
    expect(problems(failure(() => loadConfig(gcs, {})))).toEqual(['/buckets/production: Expected union value']);
  });

  test('credentials: both env names or neither', () => {
    const path = write(s3('kind = "s3"\npath = "m"\nbucket = "deposits"\naccessKeyIdEnv = "KEY_ID"'));
    expect(problems(failure(() => loadConfig(path, { KEY_ID: 'x' })))).toEqual([
      '/buckets/production: give both accessKeyIdEnv and secretAccessKeyEnv, or neither',
    ]);
  });

  test('credential env variables must be set when secrets are required, and only then', () => {
    const path = write(
      s3('kind = "s3"\npath = "m"\nbucket = "deposits"\naccessKeyIdEnv = "KEY_ID"\nsecretAccessKeyEnv = "SECRET"'),
    );
    expect(problems(failure(() => loadConfig(path, { KEY_ID: 'x' })))).toEqual([
      '/buckets/production/secretAccessKeyEnv: environment variable SECRET is not set',
    ]);
    const b = loadConfig(path, { KEY_ID: 'x' }, { requireSecrets: false }).buckets.production as S3BucketSettings;
    expect(b.credentials).toBeUndefined();
    expect(b.credentialSource).toBe('the default AWS credential chain');
  });
});

describe('the secrets file and key rotation', () => {
  const ROTATING = `${MINIMAL}
[[integrators]]
name = "tool"
apiKeyEnv = "TOOL_KEY"
previousApiKeyEnv = "TOOL_OLD_KEY"
`;

  test('values of the secrets file win over the env argument; quotes and comments are read as systemd reads them', () => {
    write('# keys\n; also a comment\nTOOL_KEY = "from-file-123"\nTOOL_OLD_KEY=\'old-key-456\'\n\n', 'secrets.env');
    const c = loadConfig(write(`secretsFile = "secrets.env"\n${ROTATING}`), { TOOL_KEY: 'from-env-789' });
    expect(c.integrators).toEqual([
      {
        name: 'tool',
        apiKey: 'from-file-123',
        previousApiKey: 'old-key-456',
        updates: false,
        cache: true,
        counter: false,
      },
    ]);
  });

  test('an unset or empty previous key ends the rotation without a fault', () => {
    const path = write(ROTATING);
    expect(loadConfig(path, { TOOL_KEY: 'current-key-1' }).integrators[0]!.previousApiKey).toBeUndefined();
    expect(
      loadConfig(path, { TOOL_KEY: 'current-key-1', TOOL_OLD_KEY: '' }).integrators[0]!.previousApiKey,
    ).toBeUndefined();
  });

  test('a previous key equal to a key, a short one, and both spellings are faults', () => {
    const e = failure(() =>
      loadConfig(
        write(
          `${ROTATING}\n[[integrators]]\nname = "other"\napiKey = "current-key-1"\npreviousApiKey = "short"\npreviousApiKeyEnv = "X"\n`,
        ),
        {
          TOOL_KEY: 'tool-key-0001',
          TOOL_OLD_KEY: 'current-key-1',
        },
      ),
    );
    expect(e.message).toContain('/integrators/1/previousApiKey: Expected string length greater or equal to 8');
    expect(
      failure(() => loadConfig(write(`${ROTATING}`), { TOOL_KEY: 'tool-key-0001', TOOL_OLD_KEY: 'tool-key-0001' }))
        .message,
    ).toContain('/integrators/0: the previous API key is already in use as a key');
    expect(
      failure(() => loadConfig(write(ROTATING), { TOOL_KEY: 'tool-key-0001', TOOL_OLD_KEY: 'tiny' })).message,
    ).toContain('/integrators/0/previousApiKeyEnv: the key in TOOL_OLD_KEY is shorter than 8 characters');
  });

  test('a bad line names the file and line, never a value; an unreadable file is a fault', () => {
    write('GOOD=value-1\nnot a pair\nBAD NAME=secret-value\nOPEN="unclosed-secret\n', 'secrets.env');
    const e = failure(() => loadConfig(write(`secretsFile = "secrets.env"\n${MINIMAL}`), {}));
    expect(e.message).toContain('secrets.env line 2: expected NAME=value');
    expect(e.message).toContain('secrets.env line 3: expected NAME=value');
    expect(e.message).toContain('secrets.env line 4: the value of OPEN opens a quote it does not close');
    expect(e.message).not.toContain('secret-value');
    expect(failure(() => loadConfig(write(`secretsFile = "missing.env"\n${MINIMAL}`), {})).message).toContain(
      '/secretsFile: cannot read',
    );
  });
});

describe('the operator console', () => {
  const server = (lines: string) => write(`[server]\nlisten = "127.0.0.1:8080"\n${lines}\n${MINIMAL}`);

  test('off by default: no listener of its own, no key', () => {
    const c = loadConfig(write(MINIMAL), {});
    expect(c.server.admin).toBeUndefined();
    expect(c.server.adminKey).toBeUndefined();
  });

  test('adminListen gives it a listener; adminKeyEnv a key read from the environment', () => {
    const c = loadConfig(server('adminListen = "127.0.0.1:8088"\nadminKeyEnv = "CONSOLE_KEY"'), {
      CONSOLE_KEY: 'a-console-key-of-24-chars',
    });
    expect(c.server.admin).toEqual({ host: '127.0.0.1', port: 8088 });
    expect(c.server.adminKey).toBe('a-console-key-of-24-chars');
  });

  test('the key must be set for serve and 16 characters at least; the listener not the public one', () => {
    const keyed = server('adminKeyEnv = "CONSOLE_KEY"');
    expect(problems(failure(() => loadConfig(keyed, {})))).toEqual([
      '/server/adminKeyEnv: environment variable CONSOLE_KEY is not set or empty',
    ]);
    expect(problems(failure(() => loadConfig(keyed, { CONSOLE_KEY: 'short-key' })))).toEqual([
      '/server/adminKeyEnv: the key in CONSOLE_KEY is shorter than 16 characters',
    ]);
    // CLI commands never serve it: no key needed
    expect(loadConfig(keyed, {}, { requireSecrets: false }).server.adminKey).toBeUndefined();
    expect(problems(failure(() => loadConfig(server('adminListen = "127.0.0.1:8080"'), {})))).toEqual([
      "/server/adminListen: 127.0.0.1:8080 is the public listener's address; give the operator's own",
    ]);
    expect(problems(failure(() => loadConfig(server('adminListen = "127.0.0.1:99999"'), {})))).toEqual([
      '/server/adminListen: port 99999 is out of range',
    ]);
  });
});

describe('[[platforms]] reportKeyEnv: the key a platform reads its deposit reports with', () => {
  const REPORTS = `
[buckets.production]
kind = "local"
path = "bucket"

[[platforms]]
name = "acme"
reportKeyEnv = "ACME_REPORTS"

[[platforms]]
name = "beta"
reportKeyEnv = "BETA_REPORTS"

[[platforms]]
name = "gamma"
`;

  test('is read from the env given; a platform without it has no report key', () => {
    const c = loadConfig(write(REPORTS), { ACME_REPORTS: 'acme-reports-1', BETA_REPORTS: 'beta-reports-1' });
    expect(c.platforms.map((p) => [p.name, p.reportKey])).toEqual([
      ['acme', 'acme-reports-1'],
      ['beta', 'beta-reports-1'],
      ['gamma', undefined],
    ]);
  });

  test('unset is a fault when secrets are required, else that platform serves no reports', () => {
    const path = write(REPORTS);
    expect(problems(failure(() => loadConfig(path, { ACME_REPORTS: 'acme-reports-1' })))).toEqual([
      '/platforms/1/reportKeyEnv: environment variable BETA_REPORTS is not set or empty',
    ]);
    const c = loadConfig(path, { ACME_REPORTS: 'acme-reports-1' }, { requireSecrets: false });
    expect(c.platforms[1]!.reportKey).toBeUndefined();
  });

  test('a short key, or one two platforms share, is a fault: a shared key would read both platforms', () => {
    const path = write(REPORTS);
    expect(
      problems(failure(() => loadConfig(path, { ACME_REPORTS: 'short', BETA_REPORTS: 'beta-reports-1' }))),
    ).toEqual(['/platforms/0/reportKeyEnv: the key in ACME_REPORTS is shorter than 8 characters']);
    expect(
      problems(failure(() => loadConfig(path, { ACME_REPORTS: 'same-key-123', BETA_REPORTS: 'same-key-123' }))),
    ).toEqual([
      '/platforms/1/reportKeyEnv: the key in BETA_REPORTS is platform "acme"\'s too; each platform needs its own',
    ]);
  });
});

describe('[buckets.*] reports: written back to S3 buckets only', () => {
  test('on an S3 bucket it is kept; on a local one, or beside a platform named "reports", a fault', () => {
    const s3 = `
[buckets.production]
kind = "s3"
path = "mirror"
bucket = "deposits"
reports = true

[buckets.staging]
kind = "local"
path = "staging"
reports = true

[[platforms]]
name = "reports"
`;
    expect(problems(failure(() => loadConfig(write(s3), {}, { requireSecrets: false })))).toEqual([
      '/buckets/production/reports: a platform named "reports" would share its folder with the reports',
      '/buckets/staging/reports: reports are written back to S3 buckets only (kind = "s3")',
      '/buckets/staging/reports: a platform named "reports" would share its folder with the reports',
    ]);
    const ok = loadConfig(
      write(s3.replace('name = "reports"', 'name = "acme"').replace(/reports = true\n\n\[\[/, '[[')),
      {},
    );
    expect(ok.buckets.production).toMatchObject({ kind: 's3', reports: true });
  });
});
