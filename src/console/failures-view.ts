import type { IngestStats } from '../ingest/index.ts';
import type { ConflictEntry, FileEntry, Store } from '../store/index.ts';

/** How long a list of failures is shown before the ledger is read again, when nothing this process saw moved. */
const FAILURES_MAX_AGE_MS = 60_000;

export interface Failures {
  quarantined: FileEntry[];
  conflicts: ConflictEntry[];
}

/**
 * The quarantined files and same-name conflicts (`--failures`' list), read from the ledger again only when this
 * process applied, quarantined or refused a file since (or another process applied one: the apply sequence moved),
 * and otherwise once a minute: the ledger is read whole for it, so not per view.
 */
export class FailuresView {
  private kept: { stamp: string; at: number; failures: Failures } | undefined;

  constructor(
    private readonly store: Store,
    private readonly ingest: IngestStats | undefined,
  ) {}

  read(now: number): Failures {
    const stamp = `${this.store.appliedSeq().seq}:${this.ingest?.quarantined ?? 0}:${this.ingest?.conflicts ?? 0}`;
    if (this.kept && this.kept.stamp === stamp && now - this.kept.at < FAILURES_MAX_AGE_MS) return this.kept.failures;
    const failures: Failures = { quarantined: [], conflicts: [] };
    for (const f of this.store.failures())
      if (f.kind === 'quarantined') failures.quarantined.push(f.entry);
      else failures.conflicts.push(f.conflict);
    // newest first: what the operator has not seen yet
    failures.quarantined.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
    failures.conflicts.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
    this.kept = { stamp, at: now, failures };
    return failures;
  }
}
