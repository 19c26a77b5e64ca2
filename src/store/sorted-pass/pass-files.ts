import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PreparedFile } from '../apply/index.ts';
import { isLate, KeyMerge } from '../apply/index.ts';
import type { StoreDbs } from '../environment/index.ts';
import { syncMadeFolders } from '../environment/index.ts';
import { encodeRecords, RecordCursor } from '../holdings/index.ts';
import { appliedEntry, decideFile, emptyCounts, type FileEntry } from '../ledger/index.ts';
import { RunWriter } from './run-file.ts';

/** A file in a sorted pass: its ledger entry as it will be written (seq, counts, applyMs and recordedAt filled at the end). */
export interface PassFile {
  entry: FileEntry;
  retry?: boolean;
  inOrderGiven?: boolean;
}

/** The folder a store's sorted passes spill to, under the store's own (same disk, removed with it). */
export function passesFolder(storePath: string): string {
  return join(storePath, 'sorted-pass');
}

/** A pass's folder name: its process (for removeStaleRuns) and a unique part. */
export function passFolderName(now: number): string {
  return `${now.toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Removes the runs a process left when it died before its pass began (nothing in the store names them): a
 * folder of a process that is gone, or of this one and not being built now, unless it is `keep` (the standing
 * pass's). A live process's folder is its spill in progress, and stays.
 */
export function removeStaleRuns(
  storePath: string,
  keep: string | undefined,
  building: ReadonlySet<string>,
  alive: (pid: number) => boolean,
): void {
  let names: string[];
  try {
    names = readdirSync(passesFolder(storePath));
  } catch {
    return; // no pass made one yet
  }
  for (const name of names) {
    if (name === keep || building.has(name)) continue;
    const pid = Number(name.split('-')[1]);
    if (pid === process.pid || !alive(pid))
      rmSync(join(passesFolder(storePath), name), { recursive: true, force: true });
  }
}

/** A file the pass can take as it stands: decided `apply` by the ledger, and not late (late-files.ts). */
export function joinsPass(
  dbs: StoreDbs,
  f: Pick<PreparedFile, 'key' | 'hash' | 'size' | 'lastModified' | 'platform' | 'inOrderGiven'>,
  retry: boolean,
): boolean {
  const decision = decideFile(
    dbs.files.get(f.key),
    { hash: f.hash, size: f.size, lastModified: f.lastModified, faulty: false },
    retry,
  );
  return decision === 'apply' && !isLate(dbs, f);
}

/**
 * The first half of a sorted pass (docs/design.md, "A backlog in one sorted pass"): prepared files, given in apply
 * order a group at a time, are merged into sorted runs on disk, so the pass holds one group's records in memory
 * whatever the backlog. Nothing in the store changes until Store.applySortedPass begins the pass.
 */
export class SortedPassBuilder {
  readonly files: PassFile[] = [];
  readonly runs: string[] = [];
  records = 0;
  runBytes = 0;
  private readonly keys = new Set<string>();

  private readonly made: string | undefined;

  constructor(
    private readonly dbs: StoreDbs,
    readonly id: string,
    readonly dir: string,
    /** told once the builder is done: sealed for its pass, or discarded */
    private readonly done: () => void = () => undefined,
  ) {
    this.made = mkdirSync(dir, { recursive: true });
  }

  /** Makes the runs' names durable (each run is synced as it closes): the pass may begin. */
  seal(): void {
    syncMadeFolders(this.dir, this.made);
    this.done();
  }

  /**
   * Takes the next files in apply order as one run; gives back those the pass leaves out (a duplicate, a conflict,
   * a late file, a second version of a key), to be applied the usual way after it: none of them changes what the
   * pass's files leave.
   */
  add(files: readonly PreparedFile[]): PreparedFile[] {
    const taken: { records: RecordCursor; file: number }[] = [];
    const left: PreparedFile[] = [];
    for (const f of files) {
      if (f.overtaken || this.keys.has(f.key) || !joinsPass(this.dbs, f, f.retry ?? false)) {
        left.push(f);
        continue;
      }
      this.keys.add(f.key);
      const records = f.encoded ?? encodeRecords(f.parsed.records, f.platform);
      taken.push({ records: new RecordCursor(records.bytes), file: this.files.length });
      this.files.push({
        entry: appliedEntry(f, 0, emptyCounts(f.parsed), 0, ''),
        retry: f.retry,
        inOrderGiven: f.inOrderGiven,
      });
    }
    if (taken.length > 0) this.writeRun(taken);
    return left;
  }

  /** Removes the runs: the pass is given up before it began (or has ended). */
  discard(): void {
    this.done();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private writeRun(taken: readonly { records: RecordCursor; file: number }[]): void {
    const name = `run-${String(this.runs.length).padStart(5, '0')}.bin`;
    const w = new RunWriter(join(this.dir, name));
    try {
      const merge = new KeyMerge(taken.map((t) => t.records));
      merge.run((i) => w.add(taken[i]!.records, taken[i]!.file));
      w.close();
    } catch (e) {
      w.discard();
      throw e;
    }
    this.runs.push(name);
    this.records += w.records;
    this.runBytes += w.bytes;
  }
}
