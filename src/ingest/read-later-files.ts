import { type Fault, fault } from '../base/index.ts';
import { supersededCopies, supersededFolder } from '../bucket/index.ts';
import {
  doiKeysOfRecords,
  type EncodedRecords,
  encodeRecords,
  type FileEntry,
  type OvertakenRecords,
  type PreparedFile,
} from '../store/index.ts';
import type { PrepareReply } from './prepare-messages.ts';

/** Where a copy of an applied file may be: `root` (default: the bucket folder), `key` under it, read as a file of `readBackAs`. */
export interface ReadBackAt {
  root?: string;
  key: string;
  readBackAs: string;
}

/** A read-back that failed: `lasting` when no copy with the applied content is left (gone, changed), not a read error. */
interface LaterUnreadable {
  fault: Fault<'LATER_FILE_UNREADABLE'>;
  lasting: boolean;
}

/**
 * The ingestor's part of a late file (the store's late-files.ts): the applied files after it in apply order are
 * read back, each checked to be the content the ledger applied, and the DOI keys of the late file's records that
 * any of them carries are set aside. Files already read in an earlier round (`f.overtaken`) are not read again.
 * A later file that cannot be read back as applied leaves the answer unknown: nothing of the late file applies.
 */
export async function readLaterFiles(
  f: PreparedFile,
  later: readonly FileEntry[],
  read: (at: ReadBackAt) => Promise<PrepareReply>,
  bucket: string,
): Promise<OvertakenRecords | LaterUnreadable> {
  const mine = new Set(doiKeysOfRecords(f.encoded ?? encodeRecords(f.parsed.records, f.platform)));
  const doiKeys = new Set(f.overtaken?.doiKeys);
  const checkedSeqs = new Set(f.overtaken?.checkedSeqs);
  for (const e of later) {
    if (checkedSeqs.has(e.seq!)) continue;
    const back = await readBack(e, read, bucket);
    if ('why' in back) {
      const at = (x: { lastModified: number }) => new Date(x.lastModified).toISOString();
      const message =
        `${f.key} (LastModified ${at(f)}) comes before ${e.key} (LastModified ${at(e)}) in apply order, and that file was applied first; ` +
        `it cannot be read back as applied (${back.why}), so which of this file's records it decided is unknown: nothing of this file is applied`;
      return { fault: fault('LATER_FILE_UNREADABLE', message), lasting: back.lasting };
    }
    for (const k of doiKeysOfRecords(back)) if (mine.has(k)) doiKeys.add(k);
    checkedSeqs.add(e.seq!);
  }
  return { checkedSeqs, doiKeys };
}

/** The applied file's records, from the first copy with the applied sha256: in the bucket, a replaced S3 object, or where `--ingest` read it. */
async function readBack(
  e: FileEntry,
  read: (at: ReadBackAt) => Promise<PrepareReply>,
  bucket: string,
): Promise<EncodedRecords | { why: string; lasting: boolean }> {
  const platform = e.platform!;
  let why = 'it is no longer in the bucket folder';
  for (const at of await copiesOf(e, bucket)) {
    const reply = await read({ ...at, readBackAs: platform });
    if (reply.kind === 'readError') {
      if (reply.fault.code === 'FILE_MISSING') continue;
      return { why: reply.fault.message, lasting: false };
    }
    if (reply.file.hash !== e.hash) {
      why = `its content changed since it was applied (sha256 ${reply.file.hash.slice(0, 12)}, applied ${e.hash.slice(0, 12)})`;
      continue;
    }
    // the same bytes parse as they did; only a changed bound (ingest.maxDecompressedBytes) gets here
    if (reply.kind === 'fault') return { why: reply.fault.message, lasting: true };
    const p = reply.prepared;
    return p.encoded ?? encodeRecords(p.parsed.records, p.platform);
  }
  return { why, lasting: true };
}

async function copiesOf(e: FileEntry, bucket: string): Promise<Omit<ReadBackAt, 'readBackAs'>[]> {
  const copies: Omit<ReadBackAt, 'readBackAs'>[] = [{ key: e.key }];
  for (const key of await supersededCopies(bucket, e.key)) copies.push({ root: supersededFolder(bucket), key });
  if (e.readFrom !== undefined && e.readFrom !== bucket) copies.push({ root: e.readFrom, key: e.key });
  return copies;
}
