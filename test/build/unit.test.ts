import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianTool, INSTALL_TIMEOUT_MS } from '../support/debian.ts';
import { BUN, REPO, tempDir } from '../support/fixtures.ts';

/**
 * The systemd unit and `make install` (README, "Under systemd"). systemd-analyze comes with Debian's `systemd`
 * package, installed when missing (the checks read the unit file; no systemd needs to run).
 */

const UNIT = join(REPO, 'conf/doi-holdings.service');
const dir = tempDir();
afterAll(() => dir.remove());
let analyze: string;

describe('conf/doi-holdings.service under systemd-analyze', () => {
  beforeAll(() => {
    analyze = ensureDebianTool('systemd-analyze', 'systemd');
  }, INSTALL_TIMEOUT_MS);

  test('its exposure is 2.5 or lower', () => {
    const r = Bun.spawnSync([analyze, 'security', '--offline=true', '--no-pager', UNIT]);
    const out = r.stdout.toString() + r.stderr.toString();
    const m = /Overall exposure level for doi-holdings\.service: (\d+\.\d+)/.exec(out);
    expect(m, out.slice(-2000)).not.toBeNull();
    console.log(`systemd-analyze security: exposure ${m![1]}`);
    expect(Number(m![1])).toBeLessThanOrEqual(2.5);
  });

  test('it verifies (with its executable standing in for the installed binary)', () => {
    // verify wants ExecStart's file to exist: the unit is checked as it is, with only that path replaced
    const copy = join(dir.path, 'doi-holdings.service');
    writeFileSync(copy, readFileSync(UNIT, 'utf8').replace('/usr/local/bin/doi-holdings', BUN));
    const r = Bun.spawnSync([analyze, 'verify', copy]);
    expect({ code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }).toEqual({ code: 0, out: '' });
  });
});

test('make install puts the binary, the unit (paths following PREFIX), sysusers, the config, the docs and the dashboard in place, and keeps an existing config', () => {
  const dest = join(dir.path, 'root');
  const binary = join(dir.path, 'fake-binary');
  writeFileSync(binary, '#!/bin/sh\necho fake\n');
  chmodSync(binary, 0o755);
  const install = () =>
    Bun.spawnSync(['make', '-s', '-C', REPO, 'install', `DESTDIR=${dest}`, 'PREFIX=/opt/dh', `BINARY=${binary}`]);
  const first = install();
  expect({ code: first.exitCode, err: first.stderr.toString() }).toEqual({ code: 0, err: '' });
  const at = (p: string) => join(dest, p);
  expect(readFileSync(at('opt/dh/bin/doi-holdings'), 'utf8')).toContain('echo fake');
  expect(statSync(at('opt/dh/bin/doi-holdings')).mode & 0o777).toBe(0o755);
  const unit = readFileSync(at('etc/systemd/system/doi-holdings.service'), 'utf8');
  expect(unit).toContain('ExecStart=/opt/dh/bin/doi-holdings --config /etc/doi-holdings/doi-holdings.toml');
  expect(unit).not.toContain('/usr/local');
  expect(readFileSync(at('opt/dh/lib/sysusers.d/doi-holdings.conf'), 'utf8')).toContain('u doi-holdings');
  expect(statSync(at('etc/doi-holdings/secrets.env')).mode & 0o777).toBe(0o640);
  expect(existsSync(at('opt/dh/share/doc/doi-holdings/docs/interface.md'))).toBe(true);
  expect(readFileSync(at('opt/dh/share/doc/doi-holdings/grafana-dashboard.json'), 'utf8')).toBe(
    readFileSync(join(REPO, 'conf/grafana-dashboard.json'), 'utf8'),
  );
  writeFileSync(at('etc/doi-holdings/doi-holdings.toml'), '# the operator edited this\n');
  writeFileSync(at('etc/doi-holdings/secrets.env'), 'KEY=secret\n');
  const again = install();
  expect(again.exitCode).toBe(0);
  expect(readFileSync(at('etc/doi-holdings/doi-holdings.toml'), 'utf8')).toBe('# the operator edited this\n');
  expect(readFileSync(at('etc/doi-holdings/secrets.env'), 'utf8')).toBe('KEY=secret\n');
  expect(readFileSync(at('etc/doi-holdings/doi-holdings.toml.example'), 'utf8')).toBe(
    readFileSync(join(REPO, 'conf/doi-holdings.toml'), 'utf8'),
  );
});
