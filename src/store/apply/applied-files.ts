import {
  decodeState,
  doiKeysOfRecords,
  type EncodedRecords,
  type HoldingState,
  RecordCursor,
  StoredHolding,
  splitHoldingKey,
} from '../holdings/index.ts';

/**
 * What a committed deposit file did, told to the read models that follow the store in this process (the
 * entitlement index, the answer cache) so that they never have to re-read LMDB to stay in step.
 */
export interface AppliedFile {
  /** the file's apply sequence number: read models notice a gap (another process wrote) by it */
  seq: number;
  platform: string;
  /** the file's valid records, one per DOI key, in key order */
  records: EncodedRecords;
}

export type AppliedListener = (files: readonly AppliedFile[]) => void;

/** One record of an applied file: the holding of (DOI key, the file's platform) it leaves; undefined: removed. */
export interface HoldingChange {
  doiKey: string;
  state: HoldingState | undefined;
}

export function* holdingChanges(file: AppliedFile): Generator<HoldingChange> {
  const rec = new RecordCursor(file.records.bytes);
  while (rec.next()) {
    const { doiKey } = splitHoldingKey(rec.key);
    yield { doiKey, state: rec.upsert ? decodeState(doiKey, rec.bytes, rec.stateStart) : undefined };
  }
}

/**
 * holdingChanges read in place: per record its holding key, and the holding it leaves as a StoredHolding (reused
 * from one record to the next), or undefined for a removal. Nothing is decoded into objects.
 */
export function* storedChanges(file: AppliedFile): Generator<{ key: Uint8Array; holding: StoredHolding | undefined }> {
  const rec = new RecordCursor(file.records.bytes);
  const h = new StoredHolding();
  while (rec.next()) {
    if (!rec.upsert) {
      yield { key: rec.key, holding: undefined };
      continue;
    }
    h.readState(rec.key, rec.bytes, rec.stateStart, rec.stateStart + rec.stateLen);
    yield { key: rec.key, holding: h };
  }
}

/** The DOI keys of an applied file's records, changed or not (nothing decoded). */
export function doiKeysOf(file: AppliedFile): Generator<string> {
  return doiKeysOfRecords(file.records);
}

/** The listeners of one store, and how many of its write transactions have not told them yet. */
export class AppliedListeners {
  private readonly listeners: AppliedListener[] = [];
  /** transactions started and not yet told: a read model must not mistake their sequence numbers for another writer's */
  pending = 0;

  add(listener: AppliedListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  get active(): boolean {
    return this.listeners.length > 0;
  }

  /** Tells every listener; one that throws does not keep the others from hearing, nor fail the commit's caller. */
  tell(files: readonly AppliedFile[]): void {
    if (files.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(files);
      } catch (e) {
        this.failures.push(String(e));
        if (this.failures.length > 10) this.failures.shift();
      }
    }
  }
  /** the last few listener failures, for tests and operators (listeners are expected to handle their own) */
  readonly failures: string[] = [];
}
