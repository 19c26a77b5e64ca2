import type { IngestSettings } from '../config/index.ts';
import type { Fault } from '../fault.ts';
import type { ApplyStatus, FileEntry, Store } from '../store/index.ts';
import { prepareFile } from './prepare.ts';
import { readBucketFile } from './read-bucket-file.ts';

export type IngestOutcome = ApplyStatus | { status: 'quarantined'; entry: FileEntry } | { status: 'missing'; fault: Fault };

/**
 * Applies one file now, synchronously committed (the CLI's --ingest and --retry). The daemon's Ingestor does
 * the same with ordering, batching and retries.
 */
export async function ingestFileNow(
  store: Store,
  root: string,
  key: string,
  platforms: ReadonlySet<string>,
  settings: IngestSettings,
  opts: { retry?: boolean; now?: () => Date } = {},
): Promise<IngestOutcome> {
  const now = opts.now ?? (() => new Date());
  let file;
  try {
    file = await readBucketFile(root, key);
  } catch (e) {
    return { status: 'missing', fault: { code: 'READ_FAILED', message: `${key}: cannot read: ${(e as Error).message}` } };
  }
  const existing = store.fileEntry(key);
  if (existing?.outcome === 'applied' && existing.hash !== file.hash) {
    const conflict = await store.recordConflict(file, now);
    if (conflict) return { status: 'conflict', conflict, entry: existing };
  }
  const prepared = await prepareFile(file, platforms, settings.maxDecompressedBytes, 1);
  if ('code' in prepared) {
    const entry = await store.quarantine({
      key,
      platform: prepared.platform,
      size: file.size,
      hash: file.hash,
      lastModified: file.lastModified,
      code: prepared.code,
      message: `${key}: ${prepared.message}`,
      tries: 1,
      recordedAt: now().toISOString(),
    });
    return { status: 'quarantined', entry };
  }
  prepared.retry = opts.retry;
  return store.applyFilesSync([prepared], now)[0]!;
}
