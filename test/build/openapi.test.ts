import { afterAll, beforeAll, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUN, REPO, startDaemon, tempDir, waitForLog, writeConfig } from '../support/fixtures.ts';

/**
 * The /openapi.json a running daemon serves passes Redocly's `recommended` ruleset with neither errors nor warnings
 * (@redocly/cli, a devDependency), and its operationIds are the stable names client generators build on.
 */

const dir = tempDir('doi-holdings-openapi-');
let daemon: ReturnType<typeof startDaemon>;
let doc: { paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>> };
let file: string;

beforeAll(async () => {
  const cfg = writeConfig(dir.path);
  daemon = startDaemon(cfg.path);
  await waitForLog(daemon, 'daemon.started');
  const base = /"event":"daemon.started".*"url":"([^"]+)"/.exec(daemon.log())![1]!.replace(/\/$/, '');
  const text = await (await fetch(`${base}/openapi.json`)).text();
  doc = JSON.parse(text);
  file = join(dir.path, 'openapi.json');
  writeFileSync(file, text);
});

afterAll(async () => {
  await daemon?.stop();
  dir.remove();
});

test('Redocly lint with the recommended rules: no errors, no warnings', () => {
  // run in the temp folder so no redocly.yaml of a parent folder changes the rules; no telemetry, no update check
  const lint = Bun.spawnSync(
    [BUN, join(REPO, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--extends=recommended', '--format=json', file],
    {
      cwd: dir.path,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const out = lint.stdout.toString();
  let report: {
    totals: Record<string, number>;
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  try {
    report = JSON.parse(out);
  } catch {
    throw new Error(`redocly lint gave no JSON report (exit ${lint.exitCode}):\n${out}\n${lint.stderr.toString()}`);
  }
  const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
  expect({ totals: report.totals, problems }).toEqual({ totals: { errors: 0, warnings: 0, ignored: 0 }, problems: [] });
  expect(lint.exitCode).toBe(0);
});

test('every operation has its stable camelCase operationId, the /staging/ twin prefixed with staging', () => {
  const ids = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
  );
  expect(ids.sort()).toEqual(
    [
      'POST /v2.1/entitlements checkEntitlementsV21',
      'POST /v2.2/entitlements checkEntitlementsV22',
      'POST /v2.1/updates findUpdatesV21',
      'POST /v2.2/updates findUpdatesV22',
      'GET /doi/{doi} getDocumentStatus',
      'GET /v2.2/updates/changes getUpdateChanges',
      'GET /v2.2/updates/prefixes getUpdatePrefixes',
      'POST /v2.2/updates/by-prefix findUpdatesByPrefix',
      'GET /v2.2/platforms/{name}/deposits listDepositReports',
      'GET /v2.2/platforms/{name}/deposits/{file} getDepositReport',
    ]
      .flatMap((line) => {
        const [method, path, id] = line.split(' ') as [string, string, string];
        return [line, `${method} /staging${path} staging${id[0]!.toUpperCase()}${id.slice(1)}`];
      })
      // the probes are the replica's own: no /staging/ twin
      .concat(['GET /livez getLiveness', 'GET /readyz getReadiness', 'GET /healthz getHealth'])
      // push alerts: production only (one replica holds the subscriptions)
      .concat([
        'GET /v2.2/subscriptions listSubscriptions',
        'POST /v2.2/subscriptions createSubscription',
        'GET /v2.2/subscriptions/{id} getSubscription',
        'DELETE /v2.2/subscriptions/{id} deleteSubscription',
        'PUT /v2.2/subscriptions/{id}/dois watchDois',
        'DELETE /v2.2/subscriptions/{id}/dois unwatchDois',
        'POST /v2.2/subscriptions/{id}/pause pauseSubscription',
        'POST /v2.2/subscriptions/{id}/resume resumeSubscription',
        'POST /v2.2/subscriptions/{id}/rotate-secret rotateSubscriptionSecret',
        'GET /v2.2/subscriptions/{id}/deliveries listDeliveries',
        'POST /v2.2/subscriptions/{id}/replay replayDeliveries',
      ])
      .sort(),
  );
});

test('the status pages and the probes are public (security: []); every other operation needs the x-api-key', () => {
  const probes = ['/livez', '/readyz', '/healthz'];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const op of Object.values(ops))
      expect([path, op.security]).toEqual([
        path,
        path.endsWith('/doi/{doi}') || probes.includes(path) ? [] : [{ apiKey: [] }],
      ]);
});

test("the Entitlement Object has GetFTR's members in its order: av and licenses after vor, the org with its customerID", () => {
  type Schema = { properties: Record<string, Schema>; items: Schema; required?: string[] };
  const { components } = doc as unknown as { components: { schemas: Record<string, Schema> } };
  const object = components.schemas.EntitlementsResponse!.properties.entitlements!.items;
  const members = Object.keys(object.properties);
  expect(members.slice(members.indexOf('document'), members.indexOf('uid') + 1)).toEqual([
    'document',
    'vor',
    'av',
    'licenses',
    'org',
    'uid',
  ]);
  expect(Object.keys(object.properties.av!.items.properties)).toEqual(['url', 'contentType']);
  expect(object.properties.licenses!.items.required).toEqual(['type', 'url', 'startDate']);
  expect(Object.keys(object.properties.org!.properties)).toContain('customerID');
});
