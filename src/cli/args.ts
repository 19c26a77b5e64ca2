import { type Fault, fault } from '../base/index.ts';
import type { EnvName } from '../config/index.ts';
import { UPDATE_FORMATS, type UpdateFormat } from '../update-record/index.ts';

/** One program, one command per invocation (README, "Operating it"). */
type Command =
  | { kind: 'serve' }
  | { kind: 'check-config' }
  | { kind: 'dump'; platform?: string; doi?: string; history?: boolean }
  | { kind: 'validate'; files: string[] }
  | { kind: 'ingest'; files: string[] }
  | { kind: 'import-updates'; source: string; format?: UpdateFormat; allowShrink?: boolean }
  | { kind: 'harvest'; full?: boolean; allowShrink?: boolean }
  | { kind: 'failures' }
  | { kind: 'retry'; key: string }
  | { kind: 'report'; keys: string[] }
  | { kind: 'stats' }
  | { kind: 'backup'; dir: string }
  | { kind: 'help' }
  | { kind: 'version' };

export interface Invocation {
  command: Command;
  configPath?: string;
  env: EnvName;
  /** --env was given (--stats and --backup then take that environment only, else every configured one) */
  envGiven?: true;
  /** --json: the listing commands print their lines on a terminal too, not tables (table.ts) */
  json?: true;
}

/** the commands that print tables on a terminal, and take --json */
const LISTING_MODES = ['--stats', '--failures', '--report', '--validate'];

const TAKES_VALUE = new Set(['--config', '--env', '--platform', '--doi', '--format', '--backup']);

export function parseArgs(argv: readonly string[]): Invocation | Fault {
  const known = new Set([
    ...TAKES_VALUE,
    '--dump',
    '--history',
    '--validate',
    '--ingest',
    '--import-updates',
    '--harvest',
    '--full',
    '--allow-shrink',
    '--failures',
    '--retry',
    '--report',
    '--stats',
    '--check-config',
    '--help',
    '--version',
    '--json',
  ]);
  const flags = new Map<string, string>();
  const seen: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(0, eq) : a;
      seen.push(name);
      if (TAKES_VALUE.has(name)) {
        const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
        // `--platform --doi X` is a missing value, not a platform named "--doi" (use --name=VALUE for such values)
        if (v === undefined || v === '' || (eq < 0 && v.startsWith('--')))
          return fault('USAGE', `${name} needs a value`);
        flags.set(name, v);
      } else if (eq > 0)
        return fault('USAGE', known.has(name) ? `${name} takes no value` : `unknown option ${name} (see --help)`);
      else flags.set(name, '');
    } else if (a === '-h') flags.set('--help', '');
    else positional.push(a);
  }
  const unknown = seen.find((s) => !known.has(s));
  if (unknown) return fault('USAGE', `unknown option ${unknown} (see --help)`);
  const env = flags.get('--env') ?? 'production';
  if (env !== 'production' && env !== 'staging')
    return fault('USAGE', `--env must be production or staging, not ${JSON.stringify(env)}`);
  const modes = [
    '--dump',
    '--validate',
    '--ingest',
    '--import-updates',
    '--harvest',
    '--failures',
    '--retry',
    '--report',
    '--stats',
    '--backup',
    '--check-config',
    '--help',
    '--version',
  ].filter((m) => flags.has(m));
  if (modes.length > 1) return fault('USAGE', `choose one of ${modes.join(', ')}`);
  const mode = modes[0] ?? (positional[0] === 'serve' ? 'serve' : undefined);
  if (flags.has('--history') && mode !== '--dump') return fault('USAGE', '--history goes with --dump');
  if (flags.has('--json') && !LISTING_MODES.includes(mode ?? ''))
    return fault('USAGE', `--json goes with ${LISTING_MODES.join(', ')}`);
  if (flags.has('--full') && mode !== '--harvest') return fault('USAGE', '--full goes with --harvest');
  if (flags.has('--allow-shrink') && mode !== '--harvest' && mode !== '--import-updates')
    return fault('USAGE', '--allow-shrink goes with --import-updates or --harvest');
  // update information goes into every configured environment: an --env here would read as "staging only"
  if (flags.has('--env') && (mode === '--import-updates' || mode === '--harvest'))
    return fault('USAGE', `${mode} goes into every configured environment; --env does not go with it`);
  const rest = positional[0] === 'serve' ? positional.slice(1) : positional;
  const base = {
    configPath: flags.get('--config'),
    env: env as EnvName,
    ...(flags.has('--env') ? { envGiven: true as const } : {}),
    ...(flags.has('--json') ? { json: true as const } : {}),
  };
  const noPositional = (cmd: Command): Invocation | Fault =>
    rest.length > 0 ? fault('USAGE', `unexpected argument ${JSON.stringify(rest[0])}`) : { ...base, command: cmd };
  switch (mode) {
    case undefined:
    case 'serve':
      return noPositional({ kind: 'serve' });
    case '--help':
      return { ...base, command: { kind: 'help' } };
    case '--version':
      return { ...base, command: { kind: 'version' } };
    case '--dump':
      return noPositional({
        kind: 'dump',
        platform: flags.get('--platform'),
        doi: flags.get('--doi'),
        ...(flags.has('--history') ? { history: true } : {}),
      });
    case '--failures':
      return noPositional({ kind: 'failures' });
    case '--stats':
      return noPositional({ kind: 'stats' });
    case '--check-config':
      return noPositional({ kind: 'check-config' });
    case '--backup':
      return noPositional({ kind: 'backup', dir: flags.get('--backup')! });
    case '--validate':
    case '--ingest':
      if (rest.length === 0) return fault('USAGE', `${mode} needs at least one FILE`);
      return { ...base, command: { kind: mode === '--validate' ? 'validate' : 'ingest', files: rest } };
    case '--retry':
      if (rest.length !== 1)
        return fault('USAGE', '--retry needs exactly one KEY (<platform>/<name>.jsonl.gz, see --failures)');
      return { ...base, command: { kind: 'retry', key: rest[0]! } };
    case '--report':
      if (rest.length === 0)
        return fault('USAGE', '--report needs at least one KEY (<platform>/<name>.jsonl.gz, as the bucket names it)');
      return { ...base, command: { kind: 'report', keys: rest } };
    case '--import-updates': {
      if (rest.length !== 1) return fault('USAGE', '--import-updates needs exactly one PATH or URL');
      const format = flags.get('--format');
      if (format !== undefined && !(UPDATE_FORMATS as readonly string[]).includes(format))
        return fault('USAGE', `--format must be ${UPDATE_FORMATS.join(' or ')}`);
      return {
        ...base,
        command: {
          kind: 'import-updates',
          source: rest[0]!,
          format: format as UpdateFormat | undefined,
          ...(flags.has('--allow-shrink') ? { allowShrink: true } : {}),
        },
      };
    }
    case '--harvest':
      return noPositional({
        kind: 'harvest',
        ...(flags.has('--full') ? { full: true } : {}),
        ...(flags.has('--allow-shrink') ? { allowShrink: true } : {}),
      });
    default:
      return fault('USAGE', `unknown mode ${mode}`);
  }
}

export const HELP = `doi-holdings: DOI holdings ingestion and Updates API service

Usage:
  doi-holdings [serve] [--config PATH]        run the daemon (the default)
  doi-holdings --dump [--env staging] [--platform P] [--doi D] [--history]
                                              print live holdings as JSON lines, store order;
                                              --history: every holding, removed ones too, with
                                              its events (compare replicas history and all)
  doi-holdings --validate FILE...             a publisher's dry run: report every rejected line; no store touched
  doi-holdings --ingest [--env staging] FILE...
                                              apply files given as <platform>/<name>.jsonl.gz paths, in order
  doi-holdings --import-updates [--format retraction-watch-csv|crossref-json] [--allow-shrink] PATH|URL
                                              import Retraction Watch CSV or Crossref works JSON into every
                                              configured environment; a CSV that would
                                              withdraw over half of that feed's updates is refused unless
                                              --allow-shrink
  doi-holdings --harvest [--full] [--allow-shrink]
                                              run every [[updates.crossref]] harvest once now, from where it
                                              stopped (every environment); --full: from its start date,
                                              replacing what the harvests brought before
  doi-holdings --failures [--env staging]     quarantined files and same-key conflicts, with reasons
  doi-holdings --stats [--env E]              per environment (all configured, or E): holdings per platform and
                                              access type, works with updates, ledger counts, file size, free pages
  doi-holdings --backup DIR [--env E]         a consistent, compacted copy of each store (all, or E) under DIR,
                                              laid out like store.dir; safe while the daemon runs; DIR
                                              is new (or empty), made once every copy is whole
  doi-holdings --retry [--env staging] KEY    forget KEY's quarantine and apply it again from the bucket
  doi-holdings --report [--env staging] KEY...
                                              each file's report: outcome, counts, rejected lines, timings
  doi-holdings --check-config [--config PATH]
                                              load the config as the daemon does, secrets included, and
                                              start nothing: every fault listed, exit 2 (before an upgrade)
  doi-holdings --help | --version

--stats, --failures, --report and --validate print tables when stdout is a terminal, their lines otherwise;
--json: their lines on a terminal too.
Config: --config PATH, else $DOI_HOLDINGS_CONFIG, else conf/default.toml.
Exit codes: 0 ok, 1 input faults found (a rejected line or file), 2 usage or config error.
`;
