import { fault, type Fault } from '../fault.ts';
import { doiKeysOfRecords, encodeRecords, type EncodedRecords, type FileEntry, type OvertakenRecords, type PreparedFile } from '../store/index.ts';
import type { PrepareReply } from './prepare-messages.ts';

/**
 * The ingestor's part of a late file (the store's late-files.ts): the applied files after it in apply order are
 * read back from the bucket folder, each checked to be the content the ledger applied, and the DOI keys of the
 * late file's records that any of them carries are set aside. A later file that cannot be read back as applied
 * (gone, changed, unreadable) leaves the answer unknown: the late file is then not applied at all.
 */
export async function readLaterFiles(
  f: PreparedFile,
  later: readonly FileEntry[],
  read: (key: string) => Promise<PrepareReply>,
): Promise<OvertakenRecords | Fault<'LATER_FILE_UNREADABLE'>> {
  const mine = new Set(doiKeysOfRecords(f.encoded ?? encodeRecords(f.parsed.records, f.platform)));
  const doiKeys = new Set<string>();
  const checkedSeqs = new Set<number>();
  for (const e of later) {
    const back = await readBack(e, read);
    if (typeof back === 'string') {
      const at = (x: { lastModified: number }) => new Date(x.lastModified).toISOString();
      return fault(
        'LATER_FILE_UNREADABLE',
        `${f.key} (LastModified ${at(f)}) comes before ${e.key} (LastModified ${at(e)}) in apply order, and that file was applied first; ` +
          `it cannot be read back as applied (${back}), so which of this file's records it decided is unknown: nothing of this file is applied`,
      );
    }
    for (const k of doiKeysOfRecords(back)) if (mine.has(k)) doiKeys.add(k);
    checkedSeqs.add(e.seq!);
  }
  return { checkedSeqs, doiKeys };
}

/** The applied file's records as the ledger applied them (same sha256), read from the bucket folder; else why not. */
async function readBack(e: FileEntry, read: (key: string) => Promise<PrepareReply>): Promise<EncodedRecords | string> {
  const reply = await read(e.key);
  if (reply.kind === 'readError') return reply.fault.code === 'FILE_MISSING' ? 'it is no longer in the bucket folder' : reply.fault.message;
  if (reply.file.hash !== e.hash) return `its content changed since it was applied (sha256 ${reply.file.hash.slice(0, 12)}, applied ${e.hash.slice(0, 12)})`;
  // the same bytes parse as they did; only a changed bound (ingest.maxDecompressedBytes) gets here
  if (reply.kind === 'fault') return reply.fault.message;
  const p = reply.prepared;
  return p.encoded ?? encodeRecords(p.parsed.records, p.platform);
}
