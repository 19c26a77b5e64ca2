import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { open } from 'lmdb';
import { historyOf } from '../../src/history/index.ts';
import { Store } from '../../src/store/index.ts';
import {
  BUN,
  dump,
  gzLines,
  REPO,
  runCli,
  type TestConfig,
  tempDir,
  writeConfig,
  writeDeposit,
} from '../support/fixtures.ts';

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;

beforeEach(() => {
  dir = tempDir();
  cfg = writeConfig(dir.path);
});
afterEach(() => dir.remove());

describe('--validate', () => {
  test('reports every rejected line with line number, field path and reason, exits 1, and touches no store', async () => {
    const key = writeDeposit(join(dir.path, 'outbox'), 'acme', [
      { doi: '10.5555/ok' },
      '',
      { doi: '10.5555/x', vor: [{ url: 'ftp://nope' }] },
      'not json',
    ]);
    const r = await runCli(['--validate', '--config', cfg.path, join(dir.path, 'outbox', key)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('3 records, 1 valid DOI, 2 rejected lines\n');
    expect(r.stdout).toContain(
      'line 3 /vor/0/url: SCHEMA: must be an http(s) URL, starting http:// or https:// (got "ftp://nope")',
    );
    expect(r.stdout).toContain('line 4: INVALID_JSON');
    expect(existsSync(cfg.store)).toBe(false);
  });

  test('a clean file exits 0', async () => {
    const key = writeDeposit(join(dir.path, 'outbox'), 'acme', [{ doi: '10.5555/ok', accessType: 'free' }]);
    const r = await runCli(['--validate', '--config', cfg.path, join(dir.path, 'outbox', key)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${join(dir.path, 'outbox', key)}: 1 record, 1 valid DOI, 0 rejected lines\n`);
  });

  test('a bad name refuses the whole file: the summary says so after the counts, which are spelled for their number', async () => {
    const path = join(dir.path, 'outbox', 'acme', 'holdings.jsonl.gz');
    writeDeposit(join(dir.path, 'outbox'), 'acme', [{ doi: '10.5555/a' }, { doi: '10.5555/b' }, { doi: 'junk' }], {
      name: 'holdings.jsonl.gz',
    });
    const r = await runCli(['--validate', '--config', cfg.path, path]);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      `${path}: REJECTED NAME_WITHOUT_UUID: the file name must contain a UUID (RFC 4122) so that it is unique`,
      `${path}: 3 records, 2 valid DOIs, 1 rejected line; none of it would be applied: the file would be refused as a whole for its name (NAME_WITHOUT_UUID)`,
      expect.stringMatching(/^ {2}line 3 \/doi: INVALID_DOI: /),
    ]);
  });

  test('a file-level fault and a bad name are reported and exit 1', async () => {
    const bad = join(dir.path, 'holdings.jsonl.gz');
    writeFileSync(bad, 'plain text');
    const r = await runCli(['--validate', '--config', cfg.path, bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('NAME_WITHOUT_UUID');
    expect(r.stdout).toContain('NOT_GZIP');
  });

  test('names the bucket refuses or never reads are reported, though their content is clean: a backslash, a leading dot', async () => {
    const outbox = join(dir.path, 'outbox');
    const slash = writeDeposit(outbox, 'acme', [{ doi: '10.5555/ok' }], {
      name: 'a\\b-00000000-0000-4000-8000-000000000001.jsonl.gz',
    });
    const hidden = writeDeposit(outbox, 'acme', [{ doi: '10.5555/ok' }], {
      name: '.00000000-0000-4000-8000-000000000002.jsonl.gz',
    });
    const partial = writeDeposit(outbox, 'acme', [{ doi: '10.5555/ok' }], {
      name: '00000000-0000-4000-8000-000000000003.jsonl.gz.partial',
    });
    const r = await runCli([
      '--validate',
      '--config',
      cfg.path,
      join(outbox, slash),
      join(outbox, hidden),
      join(outbox, partial),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${join(outbox, slash)}: REJECTED BAD_PATH: a\\b-00000000-0000-4000-8000-000000000001.jsonl.gz: the path contains a backslash`,
    );
    expect(r.stdout).toContain(`${join(outbox, hidden)}: IGNORED: a bucket takes a name starting with "."`);
    // a name the bucket never reads is only that: its other rules do not apply
    expect(r.stdout.split('\n').filter((l) => l.startsWith(join(outbox, partial)))).toEqual([
      expect.stringContaining(': IGNORED: '),
    ]);
  });

  test('a file larger than any gzip of content within the bound is TOO_LARGE without being read, as the bucket refuses it', async () => {
    const key = writeDeposit(join(dir.path, 'outbox'), 'acme', [{ doi: '10.5555/ok', accessType: 'free' }]);
    const path = join(dir.path, 'outbox', key);
    truncateSync(path, 70 * 1024 * 1024); // zero padding after the gzip member, 70 MiB in all (sparse)
    const r = await runCli(['--validate', '--config', cfg.path, path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${path}: REJECTED TOO_LARGE: ${basename(key)}: the file is ${70 * 1024 * 1024} bytes, more than a gzip of at most ${64 * 1024 * 1024} bytes of content can be`,
    );
  });
});

describe('--ingest', () => {
  test('applies files in the order given and reports each; exit 1 when a line is rejected', async () => {
    const a = join(
      cfg.bucket,
      writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/o', accessType: 'paid' }], { mtime: 5000 }),
    );
    const b = join(
      cfg.bucket,
      writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/o', accessType: 'open' }, { doi: 'junk' }], { mtime: 1000 }),
    );
    const r = await runCli(['--ingest', '--config', cfg.path, a, b]);
    expect(r.code).toBe(1);
    expect(r.lines.map((l) => JSON.parse(l).outcome)).toEqual(['applied', 'applied']);
    expect(JSON.parse(r.lines[1]!).rejectedLines[0]).toMatchObject({ line: 2, code: 'INVALID_DOI' });
    expect((await dump(cfg.path)).map((l) => l.accessType)).toEqual(['open']);
  });

  test('ingesting the same file again is a duplicate no-op with exit 0', async () => {
    const a = join(cfg.bucket, writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/d' }]));
    expect((await runCli(['--ingest', '--config', cfg.path, a])).code).toBe(0);
    const again = await runCli(['--ingest', '--config', cfg.path, a]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.lines[0]!).outcome).toBe('duplicate');
  });
});

describe('--report', () => {
  test("prints each file's report from the ledger: applied, quarantined, its conflicts; an unknown key is a usage error", async () => {
    const good = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/r1', accessType: 'open' }, { doi: 'junk' }], {
      mtime: 1000,
    });
    const bad = writeDeposit(cfg.bucket, 'acme', [], { bytes: new Uint8Array([1, 2, 3]) });
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, good), join(cfg.bucket, bad)]);
    writeFileSync(join(cfg.bucket, good), gzLines([{ doi: '10.5555/r2' }])); // the same name, other content
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, good)]);

    const r = await runCli(['--report', '--config', cfg.path, good, bad]);
    expect(r.code).toBe(0);
    const [g, b] = r.lines.map((l) => JSON.parse(l));
    expect(g).toMatchObject({
      env: 'production',
      key: good,
      platform: 'acme',
      outcome: 'applied',
      seq: 1,
      lastModified: '1970-01-01T00:16:40.000Z',
      tries: 1,
    });
    expect(g.counts).toMatchObject({ records: 2, added: 1, rejected: 1 });
    expect(g.rejectedLines).toEqual([expect.objectContaining({ line: 2, code: 'INVALID_DOI' })]);
    expect(g.conflicts).toEqual([expect.objectContaining({ code: 'KEY_REUSED' })]);
    expect(g.conflicts[0].message).toContain('file names must be unique');
    expect(b).toMatchObject({ key: bad, outcome: 'quarantined', code: 'NOT_GZIP' });

    const unknown = await runCli(['--report', '--config', cfg.path, good, 'acme/nope.jsonl.gz']);
    expect(unknown.code).toBe(2);
    expect(unknown.lines).toHaveLength(1);
    expect(unknown.stderr).toContain('acme/nope.jsonl.gz: not in the production ledger');
    expect((await runCli(['--report', '--config', cfg.path])).code).toBe(2);
  });

  test('over 1,000 rejected lines: the rest are counted, and the note says how to list them all', async () => {
    const key = writeDeposit(
      cfg.bucket,
      'acme',
      Array.from({ length: 1003 }, (_, i) => ({ doi: `bad-${i}` })),
    );
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    const line = JSON.parse((await runCli(['--report', '--config', cfg.path, key])).lines[0]!);
    expect(line.rejectedLines).toHaveLength(1000);
    expect(line.rejectedNotListed).toBe(3);
    expect(line.note).toBe(
      `3 more rejected lines were counted, not kept: doi-holdings --validate ${join(cfg.bucket, key)} lists every one`,
    );
  });
});

describe('--failures and --retry', () => {
  test('lists a quarantined file with its reason; --retry applies it once the platform is registered', async () => {
    const path = join(cfg.bucket, writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.5555/g', accessType: 'open' }]));
    const first = await runCli(['--ingest', '--config', cfg.path, path]);
    expect(first.code).toBe(1);
    const failures = (await runCli(['--failures', '--config', cfg.path])).lines.map((l) => JSON.parse(l));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ kind: 'quarantined', code: 'UNKNOWN_PLATFORM' });
    writeFileSync(cfg.path, `${await Bun.file(cfg.path).text()}\n[[platforms]]\nname = "gamma"\n`);
    const retry = await runCli(['--retry', '--config', cfg.path, failures[0].key]);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.lines[0]!).outcome).toBe('applied');
    expect((await dump(cfg.path)).map((l) => l.platform)).toEqual(['gamma']);
    expect((await runCli(['--failures', '--config', cfg.path])).lines).toEqual([]);
  });

  test('--retry of an old quarantined file leaves what newer files decided and applies the rest; with a newer file gone, nothing', async () => {
    const old = writeDeposit(
      cfg.bucket,
      'gamma',
      [
        { doi: '10.5555/d', accessType: 'open' },
        { doi: '10.5555/e', accessType: 'open' },
      ],
      { mtime: 1000 },
    );
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, old)])).code).toBe(1); // UNKNOWN_PLATFORM
    writeFileSync(cfg.path, `${await Bun.file(cfg.path).text()}\n[[platforms]]\nname = "gamma"\n`);
    const newer = writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.5555/d', accessType: 'paid' }], { mtime: 5000 });
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, newer)])).code).toBe(0);

    rmSync(join(cfg.bucket, newer));
    const refused = await runCli(['--retry', '--config', cfg.path, old]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.lines[0]!)).toMatchObject({ outcome: 'quarantined', code: 'LATER_FILE_UNREADABLE' });
    expect(JSON.parse(refused.lines[0]!).message).toContain(`comes before ${newer}`);
    expect((await dump(cfg.path)).map((l) => [l.doi, l.accessType])).toEqual([['10.5555/d', 'paid']]);

    writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.5555/d', accessType: 'paid' }], {
      mtime: 5000,
      name: newer.split('/')[1],
    });
    const retry = await runCli(['--retry', '--config', cfg.path, old]);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.lines[0]!)).toMatchObject({ outcome: 'applied', counts: { added: 1, overtaken: 1 } });
    expect((await dump(cfg.path)).map((l) => [l.doi, l.accessType])).toEqual([
      ['10.5555/d', 'paid'],
      ['10.5555/e', 'open'],
    ]);
  });

  test('a file --ingest applied from a folder since deleted can still be read back: an older file after it is applied, not quarantined', async () => {
    const old = writeDeposit(
      cfg.bucket,
      'gamma',
      [
        { doi: '10.5555/d', accessType: 'open' },
        { doi: '10.5555/e', accessType: 'open' },
      ],
      { mtime: 1000 },
    );
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, old)])).code).toBe(1); // UNKNOWN_PLATFORM
    writeFileSync(cfg.path, `${await Bun.file(cfg.path).text()}\n[[platforms]]\nname = "gamma"\n`);
    // the operator's download folder, outside the bucket: a newer file, applied, then the folder removed
    const newer = writeDeposit(join(dir.path, 'downloads'), 'gamma', [{ doi: '10.5555/d', accessType: 'paid' }], {
      mtime: 5000,
    });
    expect((await runCli(['--ingest', '--config', cfg.path, join(dir.path, 'downloads', newer)])).code).toBe(0);
    const copies = readdirSync(join(cfg.bucket, '.ingested'));
    expect(copies.map((c) => existsSync(join(cfg.bucket, '.ingested', c, newer)))).toEqual([true]);
    rmSync(join(dir.path, 'downloads'), { recursive: true });

    const retry = await runCli(['--retry', '--config', cfg.path, old]);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.lines[0]!)).toMatchObject({ outcome: 'applied', counts: { added: 1, overtaken: 1 } });
    expect((await dump(cfg.path)).map((l) => [l.doi, l.accessType])).toEqual([
      ['10.5555/d', 'paid'],
      ['10.5555/e', 'open'],
    ]);
  });

  test('--ingest from elsewhere keeps one copy per content: a file quarantined, fixed and given again is read from its own copy', async () => {
    const downloads = join(dir.path, 'downloads');
    const key = writeDeposit(downloads, 'acme', [], { bytes: new TextEncoder().encode('not gzip') });
    expect((await runCli(['--ingest', '--config', cfg.path, join(downloads, key)])).code).toBe(1); // NOT_GZIP
    writeDeposit(downloads, 'acme', [{ doi: '10.5555/f', accessType: 'open' }], { name: key.split('/')[1] });
    expect((await runCli(['--ingest', '--config', cfg.path, join(downloads, key)])).code).toBe(0);
    const report = JSON.parse((await runCli(['--report', '--config', cfg.path, key])).lines[0]!) as {
      readFrom?: string;
    };
    expect(readFileSync(join(report.readFrom!, key)).equals(readFileSync(join(downloads, key)))).toBe(true);
    expect(readdirSync(join(cfg.bucket, '.ingested'))).toHaveLength(2);
  });

  test('--retry of a key that is not quarantined is a usage error', async () => {
    const r = await runCli(['--retry', '--config', cfg.path, 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not in the production ledger');
  });

  test('a same-key conflict is listed and cannot be retried', async () => {
    const key = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/c1' }]);
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    writeFileSync(join(cfg.bucket, key), gzLines([{ doi: '10.5555/c2' }]));
    const r = await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ outcome: 'conflict', code: 'KEY_REUSED' });
    const failures = (await runCli(['--failures', '--config', cfg.path])).lines.map((l) => JSON.parse(l));
    expect(failures).toMatchObject([{ kind: 'conflict', key, code: 'KEY_REUSED' }]);
    const retry = await runCli(['--retry', '--config', cfg.path, key]);
    expect(retry.code).toBe(2);
    expect(retry.stderr).toContain('new file name');
  });
});

describe('usage and config', () => {
  test('--help and --version exit 0', async () => {
    expect((await runCli(['--help'])).stdout).toContain('--dump');
    const v = await runCli(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^doi-holdings \d+\.\d+\.\d+/);
  });

  test('--dump, --failures and --report only read: where no store is yet (or a typo in store.dir points) they say so and make none', async () => {
    for (const [command, code] of [
      [['--dump'], 0],
      [['--failures'], 0],
      [['--report', 'acme/x.jsonl.gz'], 2],
    ] as const) {
      const r = await runCli([...command, '--config', cfg.path]);
      expect([r.code, r.stdout]).toEqual([code, '']);
      expect(r.stderr).toContain(`there is no store at ${join(cfg.store, 'production')} yet`);
    }
    expect(existsSync(join(cfg.store, 'production'))).toBe(false); // not even its folder
    // the daemon making it: the file is there, its tables not yet (a --dump polling a starting daemon saw this)
    const bare = open({ path: join(cfg.store, 'production') });
    await bare.close();
    const r = await runCli(['--dump', '--config', cfg.path]);
    expect([r.code, r.stdout]).toEqual([0, '']);
    expect(r.stderr).toContain('there is no store at');
  });

  test('--dump into a reader that stops early (| head) ends quietly, exit 0, no stack trace', async () => {
    const key = writeDeposit(
      cfg.bucket,
      'acme',
      Array.from({ length: 5000 }, (_, i) => ({ doi: `10.5555/many.${i}`, accessType: 'open' })),
    );
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)])).code).toBe(0);
    const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--dump', '--config', cfg.path], {
      cwd: REPO,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).startsWith('{"env":"production"')).toBe(true);
    await reader.cancel(); // as head does once it has its lines: the pipe's read end closes
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect([code, stderr]).toEqual([0, '']);
  });

  test('an unknown option is a usage error with exit 2', async () => {
    const r = await runCli(['--frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option --frobnicate');
  });

  test('a bad config stops start-up with every fault listed by path, exit 2', async () => {
    const bad = join(dir.path, 'bad.toml');
    writeFileSync(
      bad,
      '[server]\nlisten = "nowhere"\n[buckets.production]\nkind = "ftp"\npath = "x"\n[[platforms]]\nname = "Bad Name"\n[[integrators]]\nname = "i"\n',
    );
    const r = await runCli(['--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/server/listen');
    expect(r.stderr).toContain('/buckets/production');
    expect(r.stderr).toContain('/platforms/0/name');
  });

  test('--check-config loads the config as the daemon does, secrets included, and starts nothing; --stats does not check secrets', async () => {
    const secret = 'DOI_HOLDINGS_TEST_CHECK_SECRET';
    cfg = writeConfig(
      dir.path,
      `[[platforms]]\nname = "gamma"\nentitlementUrl = "https://gamma.example/e"\nentitlementSecretEnv = "${secret}"\n`,
    );
    const env = { [secret]: '' }; // unset or empty: the same to serve
    const unset = await runCli(['--check-config', '--config', cfg.path], env);
    expect([unset.code, unset.stdout]).toEqual([2, '']);
    expect(unset.stderr).toContain(
      `/platforms/2/entitlementSecretEnv: environment variable ${secret} is not set or empty`,
    );
    // the daemon refuses it the same way
    expect((await runCli(['--config', cfg.path], env)).stderr).toContain(
      `environment variable ${secret} is not set or empty`,
    );
    // while --stats of a store that exists passes it by
    const key = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/checked' }]);
    expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)], env)).code).toBe(0);
    expect((await runCli(['--stats', '--env', 'production', '--config', cfg.path], env)).code).toBe(0);

    rmSync(cfg.store, { recursive: true, force: true });
    const set = await runCli(['--check-config', '--config', cfg.path], { [secret]: 'gamma-secret-0123456789' });
    expect([set.code, set.stderr]).toEqual([0, '']);
    expect(JSON.parse(set.stdout)).toEqual({ config: cfg.path, ok: true });
    expect(existsSync(cfg.store)).toBe(false); // no store opened or made
  });

  test('--check-config where no config file is given or found names the built-in default, not a path with no file', async () => {
    // a working folder without conf/default.toml, as for the installed binary run outside the repository
    const { DOI_HOLDINGS_CONFIG: _, ...env } = process.env;
    const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), '--check-config'], {
      cwd: dir.path,
      env,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(existsSync(join(dir.path, 'conf', 'default.toml'))).toBe(false);
    expect([code, stderr]).toEqual([0, '']);
    expect(JSON.parse(stdout)).toEqual({ config: 'built-in default', ok: true });
  });

  test('--dump selects by --platform and by --doi in any DOI form', async () => {
    const a = join(cfg.bucket, writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/Q' }, { doi: '10.5555/r' }]));
    const b = join(cfg.bucket, writeDeposit(cfg.bucket, 'beta', [{ doi: '10.5555/q' }]));
    await runCli(['--ingest', '--config', cfg.path, a, b]);
    expect((await dump(cfg.path, ['--platform', 'beta'])).map((l) => l.doi)).toEqual(['10.5555/q']);
    expect((await dump(cfg.path, ['--doi', 'https://doi.org/10.5555/q'])).map((l) => `${l.doi}@${l.platform}`)).toEqual(
      ['10.5555/Q@acme', '10.5555/q@beta'],
    );
    // a doi.org link is percent-decoded, as in the APIs; one that does not decode, or is not a DOI, is a usage error
    expect(
      (await dump(cfg.path, ['--doi', 'https://doi.org/10.5555%2Fq'])).map((l) => `${l.doi}@${l.platform}`),
    ).toEqual(['10.5555/Q@acme', '10.5555/q@beta']);
    const bad = await runCli(['--dump', '--config', cfg.path, '--doi', 'https://doi.org/10.5555/q%zz']);
    expect([bad.code, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toContain('malformed percent-encoding at index 9 of its DOI');
  });
});

describe('--dump --history', () => {
  test("adds each holding's events with their files, tombstones included, in store order", async () => {
    const a1 = writeDeposit(
      cfg.bucket,
      'acme',
      [
        { doi: '10.5555/H', accessType: 'paid' },
        { doi: '10.5555/gone', accessType: 'open' },
      ],
      { mtime: 1_700_000_000 },
    );
    const a2 = writeDeposit(
      cfg.bucket,
      'acme',
      [
        { doi: '10.5555/h', accessType: 'open', vor: [{ url: 'https://x.example/h.pdf' }] },
        { doi: '10.5555/gone', deleted: true },
      ],
      { mtime: 1_700_000_100 },
    );
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, a1), join(cfg.bucket, a2)]);
    // the plain dump is unchanged: live holdings only, no history
    expect(await dump(cfg.path)).toEqual([
      {
        env: 'production',
        platform: 'acme',
        doi: '10.5555/h',
        accessType: 'open',
        vor: [{ url: 'https://x.example/h.pdf' }],
        updated: '2023-11-14T22:15:00.000Z',
      },
    ]);
    expect(await dump(cfg.path, ['--history'])).toEqual([
      {
        env: 'production',
        platform: 'acme',
        doi: '10.5555/gone',
        updated: '2023-11-14T22:15:00.000Z',
        live: false,
        history: [
          { event: 'added', time: '2023-11-14T22:13:20.000Z', file: a1, to: 'open' },
          { event: 'removed', time: '2023-11-14T22:15:00.000Z', file: a2, from: 'open' },
        ],
      },
      {
        env: 'production',
        platform: 'acme',
        doi: '10.5555/h',
        accessType: 'open',
        vor: [{ url: 'https://x.example/h.pdf' }],
        updated: '2023-11-14T22:15:00.000Z',
        live: true,
        history: [
          { event: 'added', time: '2023-11-14T22:13:20.000Z', file: a1, to: 'paid' },
          {
            event: 'updated',
            time: '2023-11-14T22:15:00.000Z',
            file: a2,
            from: 'paid',
            to: 'open',
            changed: ['access', 'links', 'doi'],
          },
        ],
      },
    ]);
    expect((await dump(cfg.path, ['--history', '--doi', '10.5555/GONE'])).map((l) => l.live)).toEqual([false]);
  });

  test("what an update changed is said by the status page's rule: paid -> open alone is a change of access", async () => {
    const a1 = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/p', accessType: 'paid' }], { mtime: 1_700_000_000 });
    const a2 = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/p', accessType: 'open' }], { mtime: 1_700_000_100 });
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, a1), join(cfg.bucket, a2)]);
    const [line] = (await dump(cfg.path, ['--history'])) as { history: Record<string, unknown>[] }[];
    expect(line!.history[1]).toEqual({
      event: 'updated',
      time: '2023-11-14T22:15:00.000Z',
      file: a2,
      from: 'paid',
      to: 'open',
      changed: ['access'],
    });
    const store = Store.open(cfg.store, 'production', { mapSizeBytes: 1 << 26, readOnly: true });
    try {
      const page = historyOf(store, '10.5555/p')!.events.filter((e) => e.kind === 'holding' && e.change === 'changed');
      expect(page.map((e) => (e.kind === 'holding' ? e.changed : undefined))).toEqual([
        line!.history[1]!.changed as never,
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("--ingest runs the daemon's rules", () => {
  test('a quarantined file given again is still reported as quarantined, exit 1 each time', async () => {
    const key = writeDeposit(cfg.bucket, 'acme', [], { bytes: Buffer.from('plain text') });
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.lines[0]!)).toMatchObject({ key, outcome: 'quarantined', code: 'NOT_GZIP' });
    }
  });

  test('a file that cannot be read is reported, and neither an applied nor a quarantined entry is touched', async () => {
    const applied = writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/a1' }]);
    const bad = writeDeposit(cfg.bucket, 'acme', [], { bytes: Buffer.from('plain text') });
    await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, applied), join(cfg.bucket, bad)]);
    for (const key of [applied, bad]) {
      rmSync(join(cfg.bucket, key));
      mkdirSync(join(cfg.bucket, key)); // stat works, reading fails
    }
    const r = await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, applied)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ key: applied, outcome: 'unreadable', code: 'READ_FAILED' });
    const retry = await runCli(['--retry', '--config', cfg.path, bad]);
    expect(retry.code).toBe(1);
    expect(JSON.parse(retry.lines[0]!)).toMatchObject({ key: bad, outcome: 'unreadable', code: 'READ_FAILED' });
    const failures = (await runCli(['--failures', '--config', cfg.path])).lines.map((l) => JSON.parse(l));
    expect(failures.map((f) => [f.kind, f.key, f.code])).toEqual([['quarantined', bad, 'NOT_GZIP']]);
    expect((await dump(cfg.path)).map((l) => l.doi)).toEqual(['10.5555/a1']);
  });

  test('a file in an unregistered platform folder is quarantined with a message that names it once', async () => {
    const key = writeDeposit(cfg.bucket, 'gamma', [{ doi: '10.5555/g' }]);
    const r = await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.lines[0]!)).toEqual({
      env: 'production',
      key,
      outcome: 'quarantined',
      code: 'UNKNOWN_PLATFORM',
      message: `${key}: platform "gamma" is not registered in the config`,
    });
  });

  test('a missing file and a hidden file are reported, not applied, exit 1', async () => {
    const missing = join(cfg.bucket, 'acme', '00000000-0000-4000-8000-0000000000ee.jsonl.gz');
    const hidden = join(
      cfg.bucket,
      writeDeposit(cfg.bucket, 'acme', [{ doi: '10.5555/h' }], {
        name: '.00000000-0000-4000-8000-0000000000ef.jsonl.gz',
      }),
    );
    const r = await runCli(['--ingest', '--config', cfg.path, missing, hidden]);
    expect(r.code).toBe(1);
    expect(r.lines.map((l) => [JSON.parse(l).key, JSON.parse(l).outcome, JSON.parse(l).code])).toEqual([
      ['acme/00000000-0000-4000-8000-0000000000ee.jsonl.gz', 'unreadable', 'FILE_MISSING'],
      ['acme/.00000000-0000-4000-8000-0000000000ef.jsonl.gz', 'ignored', undefined],
    ]);
    expect(await dump(cfg.path)).toEqual([]);
  });

  test('a truncated gzip is quarantined at once (one try: the operator is there), and --retry applies it once complete', async () => {
    const full = gzLines([{ doi: '10.5555/t', accessType: 'free' }]);
    const key = writeDeposit(cfg.bucket, 'acme', [], { bytes: full.subarray(0, full.length - 6) });
    const r = await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, key)]);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({
      outcome: 'quarantined',
      code: 'GZIP_TRUNCATED',
      message: `${key}: the gzip stream is truncated (unexpected end of file)`,
    });
    writeFileSync(join(cfg.bucket, key), full);
    const retry = await runCli(['--retry', '--config', cfg.path, key]);
    expect(retry.code).toBe(0);
    expect((await dump(cfg.path)).map((l) => l.doi)).toEqual(['10.5555/t']);
  });
});

test('--version names the program and the commit it runs from (as doi_holdings_build_info does)', async () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  // what git says of this checkout; without git the program says `unknown` (base/build-commit.ts)
  let commit = 'unknown';
  try {
    const git = Bun.spawnSync(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD']);
    if (git.exitCode === 0) commit = git.stdout.toString().trim();
  } catch {}
  const r = await runCli(['--version']);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`doi-holdings ${pkg.version} (commit ${commit})\n`);
});
