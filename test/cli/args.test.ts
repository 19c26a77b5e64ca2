import { describe, expect, test } from 'bun:test';
import type { Fault } from '../../src/base/fault.ts';
import { HELP, type Invocation, parseArgs } from '../../src/cli/args.ts';

/** README, "Operating it": one command per invocation; usage faults are values, not exceptions. */

function ok(argv: string[]): Invocation {
  const r = parseArgs(argv);
  if ('code' in r) throw new Error(`expected ${JSON.stringify(argv)} to parse: ${r.message}`);
  return r;
}

function usage(argv: string[]): Fault {
  const r = parseArgs(argv);
  if (!('code' in r)) throw new Error(`expected ${JSON.stringify(argv)} to be a usage fault, got ${JSON.stringify(r)}`);
  expect(r.code).toBe('USAGE');
  return r;
}

describe('serve (the default)', () => {
  test('no arguments: serve production with the default config', () => {
    expect(ok([])).toEqual({ command: { kind: 'serve' }, configPath: undefined, env: 'production' });
  });

  test('the explicit serve word and --config', () => {
    expect(ok(['serve', '--config', 'conf/x.toml'])).toEqual({
      command: { kind: 'serve' },
      configPath: 'conf/x.toml',
      env: 'production',
    });
    expect(ok(['--config=/etc/doi.toml'])).toEqual({
      command: { kind: 'serve' },
      configPath: '/etc/doi.toml',
      env: 'production',
    });
  });

  test('an unexpected positional argument is an error', () => {
    expect(usage(['serve', 'extra']).message).toBe('unexpected argument "extra"');
    expect(usage(['run']).message).toBe('unexpected argument "run"');
  });
});

describe('--dump', () => {
  test('plain', () => {
    expect(ok(['--dump'])).toEqual({
      command: { kind: 'dump', platform: undefined, doi: undefined },
      configPath: undefined,
      env: 'production',
    });
  });

  test('with --platform, --doi, --env and --config, in any order and in both value forms', () => {
    const want: Invocation = {
      command: { kind: 'dump', platform: 'acme', doi: '10.1234/AbC' },
      configPath: 'c.toml',
      env: 'staging',
      envGiven: true,
    };
    expect(
      ok(['--dump', '--platform', 'acme', '--doi', '10.1234/AbC', '--env', 'staging', '--config', 'c.toml']),
    ).toEqual(want);
    expect(ok(['--env=staging', '--doi=10.1234/AbC', '--config=c.toml', '--platform=acme', '--dump'])).toEqual(want);
  });

  test('a value may itself contain "="', () => {
    expect(ok(['--dump', '--doi=10.1234/a=b']).command).toEqual({
      kind: 'dump',
      platform: undefined,
      doi: '10.1234/a=b',
    });
  });

  test('--env production is explicit', () => {
    expect(ok(['--dump', '--env', 'production']).env).toBe('production');
  });

  test('--env must be production or staging', () => {
    expect(usage(['--dump', '--env', 'test']).message).toBe('--env must be production or staging, not "test"');
    expect(usage(['--dump', '--env=Staging']).message).toBe('--env must be production or staging, not "Staging"');
  });

  test('--history goes with --dump only', () => {
    expect(ok(['--dump', '--history']).command).toEqual({
      kind: 'dump',
      platform: undefined,
      doi: undefined,
      history: true,
    });
    expect(usage(['--failures', '--history']).message).toBe('--history goes with --dump');
    expect(usage(['--history']).message).toBe('--history goes with --dump');
    expect(usage(['--dump', '--history=yes']).message).toBe('--history takes no value');
  });

  test('--dump takes no positional arguments and no value', () => {
    expect(usage(['--dump', 'acme']).message).toBe('unexpected argument "acme"');
    expect(usage(['--dump=acme']).message).toBe('--dump takes no value');
  });
});

describe('--validate and --ingest', () => {
  test('--validate FILE...', () => {
    expect(ok(['--validate', 'a/x.jsonl.gz', 'b/y.jsonl.gz'])).toEqual({
      command: { kind: 'validate', files: ['a/x.jsonl.gz', 'b/y.jsonl.gz'] },
      configPath: undefined,
      env: 'production',
    });
  });

  test('--ingest FILE... keeps the given order and takes --env and --config', () => {
    expect(
      ok([
        '--ingest',
        '--env',
        'staging',
        'acme/2.jsonl.gz',
        'acme/1.jsonl.gz',
        '--config',
        'c.toml',
        'beta/3.jsonl.gz',
      ]),
    ).toEqual({
      command: { kind: 'ingest', files: ['acme/2.jsonl.gz', 'acme/1.jsonl.gz', 'beta/3.jsonl.gz'] },
      configPath: 'c.toml',
      env: 'staging',
      envGiven: true,
    });
  });

  test('files may come before the flag', () => {
    expect(ok(['x.jsonl.gz', '--validate']).command).toEqual({ kind: 'validate', files: ['x.jsonl.gz'] });
  });

  test('at least one FILE', () => {
    expect(usage(['--validate']).message).toBe('--validate needs at least one FILE');
    expect(usage(['--ingest', '--env', 'staging']).message).toBe('--ingest needs at least one FILE');
  });

  test('a single-dash argument other than -h is a file name, not a flag', () => {
    expect(ok(['--validate', '-']).command).toEqual({ kind: 'validate', files: ['-'] });
  });
});

describe('--failures, --retry, --import-updates, --help, --version', () => {
  test('--failures, for an environment', () => {
    expect(ok(['--failures'])).toEqual({ command: { kind: 'failures' }, configPath: undefined, env: 'production' });
    expect(ok(['--failures', '--env', 'staging']).env).toBe('staging');
    expect(usage(['--failures', 'acme']).message).toBe('unexpected argument "acme"');
  });

  test('--retry KEY', () => {
    expect(ok(['--retry', 'acme/3f2504e0-4f89-41d3-9a0c-0305e82c3301.jsonl.gz', '--env', 'staging'])).toEqual({
      command: { kind: 'retry', key: 'acme/3f2504e0-4f89-41d3-9a0c-0305e82c3301.jsonl.gz' },
      configPath: undefined,
      env: 'staging',
      envGiven: true,
    });
  });

  test('--retry needs exactly one KEY', () => {
    const msg = '--retry needs exactly one KEY (<platform>/<name>.jsonl.gz, see --failures)';
    expect(usage(['--retry']).message).toBe(msg);
    expect(usage(['--retry', 'a', 'b']).message).toBe(msg);
  });

  test('--import-updates PATH|URL with an optional --format', () => {
    expect(ok(['--import-updates', 'https://rw.example/rw.csv'])).toEqual({
      command: { kind: 'import-updates', source: 'https://rw.example/rw.csv', format: undefined },
      configPath: undefined,
      env: 'production',
    });
    expect(ok(['--import-updates', '--format', 'crossref-json', 'works.json']).command).toEqual({
      kind: 'import-updates',
      source: 'works.json',
      format: 'crossref-json',
    });
    expect(ok(['--import-updates', 'rw.csv', '--format=retraction-watch-csv']).command).toEqual({
      kind: 'import-updates',
      source: 'rw.csv',
      format: 'retraction-watch-csv',
    });
  });

  test('--import-updates needs exactly one source and a known format', () => {
    expect(usage(['--import-updates']).message).toBe('--import-updates needs exactly one PATH or URL');
    expect(usage(['--import-updates', 'a.csv', 'b.csv']).message).toBe(
      '--import-updates needs exactly one PATH or URL',
    );
    expect(usage(['--import-updates', 'a.csv', '--format', 'csv']).message).toBe(
      '--format must be retraction-watch-csv or crossref-json',
    );
  });

  test('--import-updates and --harvest refuse --env: update information goes into every configured environment', () => {
    expect(usage(['--import-updates', '--env', 'staging', 'a.csv']).message).toBe(
      '--import-updates goes into every configured environment; --env does not go with it',
    );
    expect(usage(['--import-updates', 'a.csv', '--env=production']).message).toBe(
      '--import-updates goes into every configured environment; --env does not go with it',
    );
    expect(usage(['--harvest', '--env', 'staging']).message).toBe(
      '--harvest goes into every configured environment; --env does not go with it',
    );
    expect(ok(['--ingest', '--env', 'staging', 'acme/x.jsonl.gz']).env).toBe('staging'); // a deposit file has one environment
  });

  test('--help, -h and --version', () => {
    expect(ok(['--help'])).toEqual({ command: { kind: 'help' }, configPath: undefined, env: 'production' });
    expect(ok(['-h']).command).toEqual({ kind: 'help' });
    expect(ok(['--version'])).toEqual({ command: { kind: 'version' }, configPath: undefined, env: 'production' });
  });

  test('the help text names every command', () => {
    for (const word of [
      '--config',
      '--dump',
      '--env',
      '--platform',
      '--doi',
      '--validate',
      '--ingest',
      '--import-updates',
      '--format',
      '--failures',
      '--retry',
      '--check-config',
      '--help',
      '--version',
    ])
      expect(HELP).toContain(word);
  });
});

describe('usage errors are values', () => {
  test('an unknown flag', () => {
    expect(usage(['--verbose'])).toEqual({ code: 'USAGE', message: 'unknown option --verbose (see --help)' });
    expect(usage(['--dump', '--plaform', 'acme']).message).toBe('unknown option --plaform (see --help)');
    expect(usage(['--dump', '--limit=5']).message).toBe('unknown option --limit (see --help)');
  });

  test.each(['--config', '--env', '--platform', '--doi', '--format'])('%s with a missing value', (flag) => {
    expect(usage(['--dump', flag])).toEqual({ code: 'USAGE', message: `${flag} needs a value` });
    expect(usage(['--dump', `${flag}=`]).message).toBe(`${flag} needs a value`);
  });

  test('a missing value followed by another flag is not taken as the value', () => {
    expect(usage(['--dump', '--platform', '--doi', '10.1234/x']).message).toBe('--platform needs a value');
    expect(usage(['--config', '--dump']).message).toBe('--config needs a value');
    expect(usage(['--ingest', '--env', '--config', 'c.toml', 'a.jsonl.gz']).message).toBe('--env needs a value');
  });

  test('a flag that takes no value given one', () => {
    expect(usage(['--failures=yes']).message).toBe('--failures takes no value');
    expect(usage(['--help=1']).message).toBe('--help takes no value');
  });

  test('two commands at once', () => {
    expect(usage(['--dump', '--failures']).message).toBe('choose one of --dump, --failures');
    expect(usage(['--validate', 'x.jsonl.gz', '--ingest']).message).toBe('choose one of --validate, --ingest');
    expect(usage(['--help', '--version']).message).toBe('choose one of --help, --version');
  });

  test('odd input gives a usage fault, not an exception', () => {
    expect(usage(['--']).message).toBe('unknown option -- (see --help)');
    expect(usage(['--=']).message).toBe('unknown option -- (see --help)');
    expect(usage(['--x=1=2']).message).toBe('unknown option --x (see --help)');
  });
});

describe('--stats and --backup', () => {
  test('--stats takes no argument; --env narrows it to one environment', () => {
    expect(parseArgs(['--stats'])).toEqual({ command: { kind: 'stats' }, configPath: undefined, env: 'production' });
    expect(parseArgs(['--stats', '--env', 'production'])).toMatchObject({ command: { kind: 'stats' }, envGiven: true });
    expect((parseArgs(['--stats', 'x']) as { message: string }).message).toBe('unexpected argument "x"');
  });

  test('--backup needs its DIR and is a mode of its own', () => {
    expect(parseArgs(['--backup', '/srv/backups/mon', '--env', 'staging'])).toEqual({
      command: { kind: 'backup', dir: '/srv/backups/mon' },
      configPath: undefined,
      env: 'staging',
      envGiven: true,
    });
    expect((parseArgs(['--backup']) as { message: string }).message).toBe('--backup needs a value');
    expect((parseArgs(['--backup', 'd', '--stats']) as { message: string }).message).toBe(
      'choose one of --stats, --backup',
    );
  });
});
