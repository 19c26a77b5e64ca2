import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { extractDebianPackage, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import { REPO, startDaemon, tempDir, waitFor, waitForLog, writeConfig, writeDeposit } from '../support/fixtures.ts';
import { PlatformServer } from '../support/platform-server.ts';
import { csv, row } from '../support/rw-sample.ts';

// Grafana's variable, spelt in the dashboard's JSON as it is (not a template string of ours)
// biome-ignore lint/suspicious/noTemplateCurlyInString: the text is Grafana's template, not ours
const DATASOURCE_VARIABLE = '${datasource}';

/**
 * What Prometheus makes of a running daemon (docs/operations.md, "Monitoring"): its /metrics passes `promtool check
 * metrics`, and a real Prometheus scraping it loads conf/alerts.yml and answers every query of
 * conf/grafana-dashboard.json. The daemon has applied files (one line rejected), quarantined one, imported update
 * information from a URL, asked a platform's Entitlement API and answered requests, so every family it exports has
 * samples. promtool and prometheus come from Debian's `prometheus` package, unpacked (never installed: it would
 * start a service).
 */

const SECRET = 'gamma-shared-secret-0123456789abcdef';
const dir = tempDir('doi-holdings-monitoring-');
let prometheusRoot: string;
let platform: PlatformServer;
let updates: ReturnType<typeof Bun.serve>;
let daemon: ReturnType<typeof startDaemon>;
/** the daemon's base URL, e.g. http://127.0.0.1:40123 */
let base: string;

beforeAll(async () => {
  prometheusRoot = extractDebianPackage('prometheus');
  platform = new PlatformServer(SECRET);
  const rw = csv([row(70000), row(70264)]);
  updates = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response(rw, { headers: { 'content-type': 'text/csv' } }),
  });
  const cfg = writeConfig(
    dir.path,
    `\n[[platforms]]\nname = "gamma"\nentitlementUrl = "${platform.url}"\nentitlementSecretEnv = "GAMMA_SECRET"\n` +
      `\n[[updates.urls]]\nurl = "http://127.0.0.1:${updates.port}/rw.csv"\nformat = "retraction-watch-csv"\neveryMinutes = 60\n`,
  );
  writeDeposit(cfg.bucket, 'acme', [
    { doi: '10.5555/open.1', accessType: 'open', vor: [{ url: 'https://acme.example/open.pdf' }] },
    { doi: 'not a DOI', accessType: 'open' },
  ]);
  writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.6666/paid.1', accessType: 'paid' }]);
  writeDeposit(cfg.bucket, 'beta', [], { bytes: new TextEncoder().encode('not gzip: quarantined') });
  daemon = startDaemon(cfg.path, { GAMMA_SECRET: SECRET });
  await waitForLog(daemon, 'daemon.started');
  base = /"event":"daemon.started".*"url":"([^"]+)"/.exec(daemon.log())![1]!.replace(/\/$/, '');
  await waitForLog(daemon, 'entitlement.index_built');
  await waitForLog(daemon, 'file.quarantined');
  await waitForLog(daemon, 'updates.imported');
  await waitFor(() => daemon.log().split('"event":"file.applied"').length - 1 === 2, 'both good files applied');
  const entitlements = await fetch(`${base}/v2.2/entitlements`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key-123' },
    body: JSON.stringify({ org: { ipv4: '192.0.2.1' }, dois: ['10.6666/paid.1', '10.5555/open.1'] }),
  });
  expect(
    ((await entitlements.json()) as { entitlements: { source?: string }[] }).entitlements.map((e) => e.source),
  ).toEqual(['service_request', 'oa_platform']);
  expect(platform.calls).toHaveLength(1);
  expect((await fetch(`${base}/doi/10.5555/open.1?format=json`)).status).toBe(200);
  expect((await fetch(`${base}/no/such/route`)).status).toBe(404);
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await daemon?.stop();
  await platform?.stop();
  await updates?.stop(true);
  dir.remove();
});

/** Each sample of a /metrics text: `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

describe('/metrics', () => {
  test('promtool check metrics finds nothing to complain of', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    // what the setup did shows, so the check reads a scrape with every kind of family filled in
    const m = samples(text);
    expect(m.get('doi_holdings_files_applied_total{env="production"}')).toBe(2);
    expect(m.get('doi_holdings_files_quarantined_total{env="production"}')).toBe(1);
    expect(m.get('doi_holdings_records_total{env="production",outcome="rejected"}')).toBe(1);
    expect(m.get('doi_holdings_platform_calls_total{platform="gamma",outcome="ok"}')).toBe(1);
    expect(m.get('doi_holdings_http_requests_total{route="other",status="404"}')).toBe(1);
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    const check = Bun.spawnSync([join(prometheusRoot, 'usr/bin/promtool'), 'check', 'metrics'], {
      stdin: Buffer.from(text),
    });
    expect({ code: check.exitCode, out: check.stdout.toString() + check.stderr.toString() }).toEqual({
      code: 0,
      out: '',
    });
  });
});

interface Target {
  refId: string;
  expr: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  multi?: boolean;
  includeAll?: boolean;
  query: string | { query: string };
}
const DASHBOARD = JSON.parse(readFileSync(join(REPO, 'conf/grafana-dashboard.json'), 'utf8')) as {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
};
const queried = DASHBOARD.panels.filter((p) => p.type !== 'row');
/** every panel's every query, named `panel title/refId` */
const EXPRS = queried.flatMap((p) => (p.targets ?? []).map((t) => [`${p.title}/${t.refId}`, t.expr] as const));
/** Grafana's interval variables, as a dashboard a few minutes old would have them */
const INTERVALS: Record<string, string> = { __rate_interval: '1m', __interval: '15s', __range: '5m' };

/**
 * The queries that find no series on the test daemon, and why; every other query must return data. Listed rather
 * than allowed: one of these returning data would mean the setup (or the query) is not what it is taken for.
 */
const EMPTY_HERE: Record<string, string> = {
  'S3: seconds since the last listing and failed rounds/A': 'the test buckets are local folders, not S3',
  'S3: seconds since the last listing and failed rounds/B': 'the test buckets are local folders, not S3',
  '5xx per second by route/A': 'no request failed',
};

describe('conf/grafana-dashboard.json', () => {
  test('is a dashboard Grafana imports: schemaVersion 39, every panel on the datasource variable, unique ids, on a 24-column grid', () => {
    expect(DASHBOARD.schemaVersion).toBe(39);
    expect(DASHBOARD.templating.list.find((v) => v.type === 'datasource')).toMatchObject({
      name: 'datasource',
      query: 'prometheus',
    });
    const ids = DASHBOARD.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of DASHBOARD.panels) expect([p.title, p.gridPos.x + p.gridPos.w <= 24]).toEqual([p.title, true]);
    for (const p of queried) {
      expect([p.title, p.datasource]).toEqual([p.title, { type: 'prometheus', uid: DATASOURCE_VARIABLE }]);
      expect([p.title, (p.targets ?? []).length > 0]).toEqual([p.title, true]);
    }
    const rows = DASHBOARD.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual([
      'Ingestion',
      'Update sources',
      'HTTP',
      'Platforms (Entitlement APIs)',
      'Entitlement index',
      'Process',
    ]);
    expect(Object.keys(EMPTY_HERE).filter((name) => !EXPRS.some(([n]) => n === name))).toEqual([]);
  });

  test('reads only series the daemon exports', async () => {
    // every family the daemon declares (# TYPE), samples or not yet (the S3 ones have samples only for S3 buckets)
    const families = [...(await (await fetch(`${base}/metrics`)).text()).matchAll(/^# TYPE (\S+) (\w+)$/gm)];
    const exported = new Set(
      families.flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ),
    );
    const read = new Set(
      EXPRS.flatMap(([, expr]) => expr.match(/\b(?:doi_holdings|process|nodejs)_[a-z0-9_]+/g) ?? []),
    );
    expect(read.size).toBeGreaterThan(25);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
  });

  describe('on a real Prometheus scraping the daemon, with conf/alerts.yml loaded', () => {
    let prometheus: ReturnType<typeof Bun.spawn> | undefined;
    let prometheusLog = '';
    let api: string;
    /** the dashboard's variables as Grafana would set them, "All" for the multi-valued */
    const values: Record<string, string> = {};

    const get = async <T>(path: string): Promise<{ status: string; data: T; error?: string }> =>
      (await fetch(`${api}${path}`)).json() as never;
    const query = (expr: string) =>
      get<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
    /** an expression with the dashboard's variables replaced as Grafana does */
    const substitute = (expr: string) =>
      expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => INTERVALS[name] ?? values[name] ?? whole);

    beforeAll(async () => {
      const port = freePort();
      api = `http://127.0.0.1:${port}`;
      const config = join(dir.path, 'prometheus.yml');
      // scraped every second (timeout no longer than the interval, or Prometheus refuses the config)
      writeFileSync(
        config,
        `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ${JSON.stringify(join(REPO, 'conf/alerts.yml'))}\n` +
          `scrape_configs:\n  - job_name: doi-holdings\n    static_configs:\n      - targets: ['${new URL(base).host}']\n`,
      );
      const proc = Bun.spawn(
        [
          join(prometheusRoot, 'usr/bin/prometheus'),
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(dir.path, 'tsdb')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        { stdout: 'pipe', stderr: 'pipe' },
      );
      prometheus = proc;
      const decoder = new TextDecoder();
      for (const stream of [proc.stdout, proc.stderr])
        void (async () => {
          for await (const chunk of stream) prometheusLog += decoder.decode(chunk);
        })();
      await waitFor(
        async () => {
          if (proc.exitCode !== null) throw new Error(`prometheus exited (${proc.exitCode}):\n${prometheusLog}`);
          return (await fetch(`${api}/-/ready`).catch(() => undefined))?.ok;
        },
        'Prometheus ready',
        30_000,
      );
      await waitFor(
        async () => {
          const t = await get<{ activeTargets: { health: string; scrapeUrl: string }[] }>('/api/v1/targets');
          return t.data.activeTargets.some((a) => a.health === 'up' && a.scrapeUrl === `${base}/metrics`);
        },
        'Prometheus to have scraped the daemon',
        30_000,
      );
      // the variables, each from its own label_values query (in order: a later one reads the earlier ones)
      for (const v of DASHBOARD.templating.list.filter((v) => v.type === 'query')) {
        const q = typeof v.query === 'string' ? v.query : v.query.query;
        const [, selector, label] = /^label_values\((.+),\s*(\w+)\)$/.exec(q) ?? [];
        if (!selector || !label) throw new Error(`variable ${v.name}: not a label_values(selector, label) query: ${q}`);
        const found = await get<string[]>(
          `/api/v1/label/${label}/values?match[]=${encodeURIComponent(substitute(selector))}`,
        );
        expect([v.name, found.status, found.error, found.data?.length > 0]).toEqual([
          v.name,
          'success',
          undefined,
          true,
        ]);
        // "All" of a multi-valued variable without an allValue is the values found, as one regex; each escaped as
        // Grafana does, for a regex inside a PromQL string (a backslash itself written twice)
        values[v.name] =
          v.multi && v.includeAll
            ? `(${found.data.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&')).join('|')})`
            : found.data[0]!;
      }
    }, 90_000); // room for both 30 s waits above

    afterAll(async () => {
      prometheus?.kill('SIGTERM');
      await prometheus?.exited;
    });

    test('the variables find this daemon: its job, its address, both environments', () => {
      expect(values).toEqual({
        job: 'doi-holdings',
        instance: `(${new URL(base).host.replaceAll('.', '\\\\.')})`,
        env: '(production|staging)',
      });
    });

    test("every panel's every query parses, and each returns data unless listed as finding none here", async () => {
      const expected = Object.keys(EMPTY_HERE).sort();
      let last: { failed: string[]; empty: string[] } = { failed: [], empty: [] };
      // rates need two scrapes in their window: asked again until the answers settle, at most 30 s
      await waitFor(
        async () => {
          const answers = await Promise.all(
            EXPRS.map(async ([name, expr]) => [name, await query(substitute(expr))] as const),
          );
          last = {
            failed: answers.filter(([, r]) => r.status !== 'success').map(([name, r]) => `${name}: ${r.error}`),
            empty: answers
              .filter(([, r]) => r.status === 'success' && r.data.result.length === 0)
              .map(([name]) => name)
              .sort(),
          };
          // a query Prometheus refuses stays refused: no use asking again
          return last.failed.length > 0 || JSON.stringify(last.empty) === JSON.stringify(expected);
        },
        'every query to parse and those with series to answer',
        30_000,
      ).catch(() => undefined);
      expect(last).toEqual({ failed: [], empty: expected });
    });

    test('the queries compute what their panels say: holdings per platform, the index complete, the build, /metrics requests per second', async () => {
      const answer = async (title: string, refId = 'A') => {
        const expr = EXPRS.find(([name]) => name === `${title}/${refId}`)?.[1];
        if (!expr) throw new Error(`no panel query ${title}/${refId}`);
        const r = await query(substitute(expr));
        return r.data.result.map(
          (s) => ({ ...s.metric, value: Number(s.value[1]) }) as Record<string, string> & { value: number },
        );
      };
      expect(await answer('Live holdings by platform')).toEqual(
        expect.arrayContaining([
          { env: 'production', platform: 'acme', value: 1 },
          { env: 'production', platform: 'gamma', value: 1 },
        ]),
      );
      expect((await answer('Index state')).map((s) => [s.env, s.value]).sort()).toEqual([
        ['production', 1],
        ['staging', 1],
      ]);
      // the daemon runs from the sources: the commit is the checkout's, short
      expect((await answer('Version and commit')).map((s) => [s.instance, s.version, s.commit, s.value])).toEqual([
        [new URL(base).host, pkg.version, expect.stringMatching(/^[0-9a-f]{4,}$/), 1],
      ]);
      // Prometheus's own scrapes are requests to /metrics: their rate is above 0 once two fall in the window
      const metricsRate = await waitFor(
        async () => (await answer('Requests per second by route')).find((s) => s.route === '/metrics' && s.value > 0),
        'a rate of /metrics requests',
        30_000,
      );
      expect(metricsRate.value).toBeGreaterThan(0);
      // a rate has a series once two scrapes fall in its window
      const calls = await waitFor(
        async () =>
          (await answer('Calls per second by outcome')).find((s) => s.platform === 'gamma' && s.outcome === 'ok'),
        "gamma's ok calls",
        30_000,
      );
      expect(calls.value).toBe(0); // the one call came before Prometheus started
    });

    test('Prometheus loaded every alert of conf/alerts.yml, and each evaluates without error', async () => {
      const alerts = [...readFileSync(join(REPO, 'conf/alerts.yml'), 'utf8').matchAll(/^\s*- alert: (\w+)$/gm)]
        .map((m) => m[1]!)
        .sort();
      type Rule = { name: string; type: string; health: string; lastError?: string };
      const rules = await waitFor(
        async () => {
          const r = await get<{ groups: { rules: Rule[] }[] }>('/api/v1/rules');
          const all = r.data.groups.flatMap((g) => g.rules);
          // "unknown" until the rule's first evaluation (every second here)
          return all.length > 0 && all.every((rule) => rule.health !== 'unknown') && all;
        },
        'every rule evaluated',
        30_000,
      );
      expect(
        rules
          .filter((r) => r.type === 'alerting')
          .map((r) => r.name)
          .sort(),
      ).toEqual(alerts);
      expect(rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`)).toEqual([]);
    });
  });
});

/** A TCP port free on 127.0.0.1 at this moment (the OS picks it; it is let go for Prometheus to take). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
