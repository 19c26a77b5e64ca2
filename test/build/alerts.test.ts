import { beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractDebianPackage, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import { REPO } from '../support/fixtures.ts';

/**
 * conf/alerts.yml: Prometheus accepts the rules, and conf/alerts.test.yml shows each firing on the series that should
 * fire it and not before (promtool, from Debian's `prometheus` package, unpacked into .cache/ when missing). Every
 * doi_holdings_* series a rule reads is one the service exports.
 */

const RULES = join(REPO, 'conf/alerts.yml');
let promtool: string;

describe('conf/alerts.yml under promtool', () => {
  beforeAll(() => {
    promtool = join(extractDebianPackage('prometheus'), 'usr/bin/promtool');
  }, INSTALL_TIMEOUT_MS);

  test('promtool check rules accepts it', () => {
    const r = Bun.spawnSync([promtool, 'check', 'rules', RULES]);
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.exitCode, out).toBe(0);
    expect(out).toContain('SUCCESS: 12 rules found');
  });

  test('promtool test rules: every alert fires when it should, and not before', () => {
    const r = Bun.spawnSync([promtool, 'test', 'rules', 'alerts.test.yml'], { cwd: join(REPO, 'conf') });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.exitCode, out).toBe(0);
    expect(out).toContain('SUCCESS');
  });
});

test('every alert has a case in conf/alerts.test.yml, and every case names an alert', () => {
  const alerts = new Set([...readFileSync(RULES, 'utf8').matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1]));
  const tested = new Set(
    [...readFileSync(join(REPO, 'conf/alerts.test.yml'), 'utf8').matchAll(/^\s*alertname: (\w+)$/gm)].map((m) => m[1]),
  );
  expect(alerts.size).toBe(12);
  expect([...alerts].sort()).toEqual([...tested].sort());
});

test('every doi_holdings_* series the rules read is exported by the service', () => {
  const read = new Set(readFileSync(RULES, 'utf8').match(/doi_holdings_[a-z0-9_]+/g) ?? []);
  expect(read.size).toBeGreaterThan(5);
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [readFileSync(join(dir, e.name), 'utf8')]
          : [],
    );
  const code = sources(join(REPO, 'src')).join('\n');
  // the alert names themselves (DoiHoldings...) are not series; every series name is quoted in the code
  expect([...read].filter((name) => !code.includes(`'${name}'`))).toEqual([]);
});
