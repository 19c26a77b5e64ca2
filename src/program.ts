import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import embeddedDefault from '../conf/default.toml' with { type: 'text' };
import pkg from '../package.json' with { type: 'json' };
import { buildCommit, FaultError, jsonLogger, type LogFormat, stderrIsJournal, writeStderr } from './base/index.ts';
import { HELP, parseArgs } from './cli/args.ts';
import { harvestCommand } from './cli/harvest-command.ts';
import { dumpCommand, failuresCommand, ingestCommand, retryCommand, validateCommand } from './cli/holdings-commands.ts';
import { importUpdatesCommand } from './cli/import-updates-command.ts';
import { EXIT_OK, EXIT_USAGE, finishOutput, processOutput as io } from './cli/output.ts';
import { outputElsewhere, Progress, stderrIsTty } from './cli/progress.ts';
import { reportCommand } from './cli/report-command.ts';
import { backupCommand, statsCommand } from './cli/store-commands.ts';
import { listingFor } from './cli/table.ts';
import { BUILT_IN_SOURCE, type Config, ENV_NAMES, type EnvName, loadConfig, resolveConfig } from './config/index.ts';
import { Daemon } from './daemon/daemon.ts';
import type { StartSignals } from './daemon/start-signals.ts';
import { Store } from './store/index.ts';
import { IMPORT_CHILD_ARG, runImportChild } from './updates/index.ts';
import { DELIVERY_CHILD_ARG, runDeliveryChild } from './webhooks/index.ts';

/** Wires the parts: parse arguments, load config, run one command or the daemon. */
async function main(argv: string[], env: Record<string, string | undefined>, signals: StartSignals): Promise<number> {
  // the daemon's import process (a harvest, an update source): its job comes from the daemon, not from the command line
  if (argv[0] === IMPORT_CHILD_ARG && process.send) {
    await signals.release();
    return runImportChild();
  }
  // the push alerts' delivery process: its job comes from the daemon too
  if (argv[0] === DELIVERY_CHILD_ARG && process.send) {
    await signals.release();
    return runDeliveryChild();
  }
  const inv = parseArgs(argv);
  // under systemd the journal reads each line's level from its prefix (`journalctl -p warning`)
  const logFormat: LogFormat = { priorities: stderrIsJournal(env.JOURNAL_STREAM) };
  // only the daemon keeps SIGHUP, SIGTERM and SIGINT from their default actions
  if (!('command' in inv && inv.command.kind === 'serve')) await signals.release();
  if ('code' in inv) {
    io.err(`doi-holdings: ${inv.message}`);
    return EXIT_USAGE;
  }
  const { command } = inv;
  if (command.kind === 'help') {
    io.out(HELP);
    return EXIT_OK;
  }
  if (command.kind === 'version') {
    io.out(`doi-holdings ${pkg.version} (commit ${buildCommit()})`); // the commit as build_info gives it
    return EXIT_OK;
  }
  const configPath = inv.configPath ?? env.DOI_HOLDINGS_CONFIG;
  // only the daemon needs the secrets, and a check of its config reads them as it does
  const config = readConfig(configPath, env, command.kind === 'serve' || command.kind === 'check-config');
  if (command.kind === 'check-config') {
    io.out(JSON.stringify({ config: config.source, ok: true }));
    return EXIT_OK;
  }
  // tables for a person at a terminal, lines for scripts: decided here once for every listing command
  const listing = listingFor(inv.json === true);
  if (command.kind === 'validate') return validateCommand(command.files, config, io, listing);
  // a reload reads the same file (or embedded default) again; the secrets file too, but not the process environment
  if (command.kind === 'serve') {
    // the secrets file owns the names it gave at start: a reload does not take them from the process environment
    const reloadEnv = Object.fromEntries(Object.entries(env).filter(([name]) => !config.secretNames.includes(name)));
    return serve(config, () => readConfig(configPath, reloadEnv, true), signals, logFormat);
  }

  if (command.kind === 'backup' || command.kind === 'stats') {
    const envs = inv.envGiven ? [inv.env] : ENV_NAMES.filter((e) => config.buckets[e]);
    if (command.kind === 'backup') return backupCommand(command.dir, envs, config, io, stderrIsTty());
    for (const env of envs) {
      const store = Store.open(config.store.dir, env, { mapSizeBytes: config.store.mapSizeBytes, readOnly: true });
      try {
        statsCommand(
          store,
          io,
          config.updates.crossref.map((c) => c.name),
          config.updates.urls.map((u) => u.url),
          listing,
        );
      } finally {
        await store.close();
      }
    }
    return EXIT_OK;
  }
  if (!config.buckets[inv.env]) {
    io.err(`doi-holdings: no bucket is configured for the ${inv.env} environment in ${config.source}`);
    return EXIT_USAGE;
  }
  // what only reads opens read-only: it never makes a store where a typo points, nor upgrades one (a rollback to
  // the previous program must still open it: docs/operations.md). Where no store is yet, nothing is held.
  const readOnly = command.kind === 'dump' || command.kind === 'failures' || command.kind === 'report';
  let store: Store;
  try {
    store = Store.open(config.store.dir, inv.env, { ...config.store, readOnly });
  } catch (e) {
    if (!(e instanceof FaultError && e.fault.code === 'STORE_NOT_MADE')) throw e;
    io.err(`doi-holdings: ${e.fault.message}`);
    return command.kind === 'report' ? EXIT_USAGE : EXIT_OK;
  }
  try {
    switch (command.kind) {
      case 'dump':
        return dumpCommand(store, command, io, new Progress(outputElsewhere()));
      case 'ingest':
        return await ingestCommand(
          command.files,
          store,
          config,
          io,
          new Progress(outputElsewhere()),
          jsonLogger(writeStderr, 'info', logFormat),
        );
      case 'failures':
        return failuresCommand(store, io, listing);
      case 'retry':
        return await retryCommand(command.key, store, inv.env, config, io);
      case 'report':
        return reportCommand(command.keys, store, inv.env, config, io, listing);
      case 'harvest':
        // a harvest keeps its progress in its first store: production's, as in the daemon
        return await harvestCommand(
          config,
          [store, ...otherStores(config, inv.env)].sort((a, b) => ENV_NAMES.indexOf(a.env) - ENV_NAMES.indexOf(b.env)),
          io,
          stderrIsTty(),
          jsonLogger(writeStderr, 'warn', logFormat),
          {
            full: command.full,
            allowShrink: command.allowShrink,
            version: pkg.version,
          },
        );
      case 'import-updates':
        return await importUpdatesCommand(
          command.source,
          command.format,
          [store, ...otherStores(config, inv.env)],
          io,
          stderrIsTty(),
          {
            allowShrink: command.allowShrink,
          },
        );
      default:
        return EXIT_USAGE;
    }
  } finally {
    await store.close();
    for (const s of opened) await s.close();
  }
}

const opened: Store[] = [];
/** Update information goes to every configured environment. */
function otherStores(config: Config, env: EnvName): Store[] {
  for (const other of ENV_NAMES) {
    if (other !== env && config.buckets[other]) opened.push(Store.open(config.store.dir, other, config.store));
  }
  return opened;
}

/** --config, else $DOI_HOLDINGS_CONFIG, else conf/default.toml, else the copy embedded in the binary. */
function readConfig(
  path: string | undefined,
  env: Record<string, string | undefined>,
  requireSecrets: boolean,
): Config {
  if (path !== undefined) return loadConfig(path, env, { requireSecrets });
  const local = resolve('conf/default.toml');
  if (existsSync(local)) return loadConfig(local, env, { requireSecrets });
  // relative paths resolve as from conf/default.toml of the working folder, though that file is not there
  return resolveConfig(Bun.TOML.parse(embeddedDefault), local, env, { requireSecrets, source: BUILT_IN_SOURCE });
}

async function serve(
  config: Config,
  reread: () => Config,
  signals: StartSignals,
  logFormat: LogFormat,
): Promise<number> {
  const log = jsonLogger(writeStderr, 'info', logFormat);
  // read once: the compiled binary carries it, the sources ask git (never failing the start)
  const daemon = new Daemon(config, log, pkg.version, buildCommit());
  // a fault of the new config is logged by reload; anything else (a drop folder that cannot be made) too, not thrown
  const reload = () =>
    void daemon.reload(reread).catch((e) => log.log('error', 'config.reload_failed', { error: String(e) }));
  // `systemctl reload` (ExecReload in the unit) sends SIGHUP; a reload asked for during start() waits for it to end
  process.on('SIGHUP', () => {
    log.log('info', 'daemon.signal', { signal: 'SIGHUP' });
    reload();
  });
  let stop: (signal: string, fields?: object) => void = () => undefined;
  const stopped = new Promise<void>((resolveStop) => {
    stop = (signal, fields = {}) => {
      log.log('info', 'daemon.signal', { signal, ...fields });
      void daemon.close().then(resolveStop);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  // what came while the program loaded: a stop stops before anything is opened; a reload (however many) runs once
  const held = signals.handOver();
  const heldStop = held.has('SIGTERM') ? 'SIGTERM' : held.has('SIGINT') ? 'SIGINT' : undefined;
  if (heldStop) {
    stop(heldStop, { message: 'came while the program loaded: stopping before start' });
    await stopped;
    return EXIT_OK;
  }
  try {
    await daemon.start();
  } catch (e) {
    // a listen address taken, a folder that cannot be made: one log line for the journal, not a stack trace
    log.log('error', 'daemon.start_failed', { error: e instanceof Error ? e.message : String(e) });
    await daemon.close();
    return EXIT_USAGE;
  }
  if (held.has('SIGHUP')) {
    log.log('info', 'daemon.signal', {
      signal: 'SIGHUP',
      message: 'came while the program loaded: reloading now that the daemon has started',
    });
    reload();
  }
  await stopped;
  return EXIT_OK;
}

/** Runs one invocation and sets the exit code; `signals` holds what came before the program was loaded. */
export async function runProgram(
  argv: string[],
  env: Record<string, string | undefined>,
  signals: StartSignals,
): Promise<void> {
  let code = EXIT_OK;
  try {
    code = await main(argv, env, signals);
  } catch (e) {
    if (!(e instanceof FaultError)) throw e;
    io.err(`doi-holdings: ${e.message}`);
    code = EXIT_USAGE;
  } finally {
    // stdout that could not be written changes it (output.ts); a bug thrown past here exits 1 all the same
    process.exitCode = finishOutput(code);
  }
}
