import { join } from 'node:path';
import type { Config, EnvName } from '../config/index.ts';
import { conflictFault, type Store } from '../store/index.ts';
import { EXIT_OK, EXIT_USAGE, type Output } from './output.ts';

/**
 * --report KEY...: what the ledger keeps of each file (docs/design.md, "Deposit records and file outcomes": every
 * file gets a report, which operators read here): its outcome, counts, rejected lines, timings, tries, and the
 * same-key conflicts recorded against it. One JSON line per key; a key the ledger does not hold is named on stderr.
 */
export function reportCommand(keys: readonly string[], store: Store, env: EnvName, config: Config, io: Output): number {
  let unknown = 0;
  for (const key of keys) {
    const entry = store.fileEntry(key);
    if (!entry) {
      unknown++;
      io.err(`${key}: not in the ${env} ledger (keys are <platform>/<name>.jsonl.gz, as the bucket names them)`);
      continue;
    }
    const conflicts = store
      .conflictsOf(key)
      .map((c) => ({ ...conflictFault(c), lastModified: iso(c.lastModified), recordedAt: c.recordedAt }));
    const { lastModified, rejectedNotListed, ...rest } = entry;
    const line: Record<string, unknown> = { env, ...rest, lastModified: iso(lastModified) };
    if (rejectedNotListed) {
      line.rejectedNotListed = rejectedNotListed;
      const bucket = config.buckets[env];
      line.note = `${rejectedNotListed} more rejected lines were counted, not kept: doi-holdings --validate ${bucket ? join(bucket.path, key) : key} lists every one`;
    }
    if (conflicts.length > 0) line.conflicts = conflicts;
    io.out(JSON.stringify(line));
  }
  return unknown > 0 ? EXIT_USAGE : EXIT_OK;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
