import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { open } from 'lmdb';
import { DEFAULT_INGEST } from '../../src/config/index.ts';
import { parseDepositFile } from '../../src/deposit/index.ts';
import { prepareBucketFile } from '../../src/ingest/prepare.ts';

/** What this machine allows an ingest, measured in the same run as the figures it bounds. */

/** Read + gunzip + JSON.parse + validation of deposit files with the ingest's own parser, on this thread (one core). */
export async function parseRate(
  paths: readonly string[],
): Promise<{ records: number; seconds: number; recordsPerSecond: number }> {
  let records = 0;
  const t0 = performance.now();
  for (const path of paths) {
    const parsed = await parseDepositFile(await readFile(path), DEFAULT_INGEST);
    if ('code' in parsed) throw new Error(`${path}: ${parsed.message}`);
    records += parsed.recordLines;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { records, seconds, recordsPerSecond: records / seconds };
}

/** Sequential writes of `bytes` to a new file in `dir`, 8 MiB a write, synced (fsync) before the clock stops. */
export function sequentialWriteRate(
  dir: string,
  bytes = 1024 ** 3,
): { bytes: number; seconds: number; bytesPerSecond: number } {
  const path = `${dir}/sequential-write.tmp`;
  const chunk = Buffer.alloc(8 * 1024 ** 2, 0x5a);
  const t0 = performance.now();
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < bytes; written += chunk.length) writeSync(fd, chunk);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const seconds = (performance.now() - t0) / 1000;
  rmSync(path, { force: true });
  return { bytes, seconds, bytesPerSecond: bytes / seconds };
}

/**
 * The ingest's own preparation of files (read + hash + gunzip + parse + validation + encoding for the store:
 * `prepareBucketFile`, what a parse worker runs), on this thread: a sorted pass's first phase is bound by it,
 * divided among `ingest.parseWorkers`.
 */
export async function prepareRate(
  root: string,
  keys: readonly string[],
  platforms: readonly string[],
): Promise<{ records: number; seconds: number; recordsPerSecond: number }> {
  let records = 0;
  const t0 = performance.now();
  for (const key of keys) {
    const reply = await prepareBucketFile({
      id: 0,
      root,
      key,
      platforms: [...platforms],
      maxDecompressedBytes: DEFAULT_INGEST.maxDecompressedBytes,
      tries: 1,
    });
    if (reply.kind !== 'prepared') throw new Error(`${key}: ${reply.kind}`);
    records += reply.prepared.encoded!.count;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { records, seconds, recordsPerSecond: records / seconds };
}

/**
 * lmdb-js appending `count` ascending binary keys (34 bytes, as a holding key) with 90-byte values (a holding's
 * size) into an empty environment, in transactions of 250,000 (a sorted pass's chunks), synced: the bound of a
 * sorted pass's writing phase into an empty store.
 */
export function lmdbAppendRate(
  dir: string,
  count = 2_000_000,
): { records: number; seconds: number; recordsPerSecond: number } {
  const path = `${dir}/lmdb-append.mdb`;
  const root = open({ path, noSubdir: true, mapSize: 8 * 1024 ** 3, useWritemap: false, compression: false });
  const db = root.openDB({ name: 'h', keyEncoding: 'binary', encoding: 'binary' });
  const key = Buffer.alloc(34, 0x61);
  const value = Buffer.alloc(90, 0x62);
  const t0 = performance.now();
  try {
    for (let i = 0; i < count; ) {
      const end = Math.min(count, i + 250_000);
      root.transactionSync(() => {
        for (; i < end; i++) {
          key.writeUInt32BE(i, 26); // ascending
          db.putSync(key, value, { append: true });
        }
      });
    }
  } finally {
    root.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  rmSync(path, { force: true });
  rmSync(`${path}-lock`, { force: true });
  return { records: count, seconds, recordsPerSecond: count / seconds };
}

/**
 * What LMDB alone takes to add a new file's holdings to a full store: the DOI keys of each of `files` (deposit
 * files not applied to it), under a platform name no file uses, put into the store's holdings database with
 * values of `valueBytes`, in one transaction each, the commit and its sync included; removed again after (not
 * timed). No parse, no decision, no history: the least any apply of such a file writes. Milliseconds, per file.
 */
export async function lmdbNewFileMs(
  dataFile: string,
  mapSizeBytes: number,
  files: readonly string[],
  valueBytes: number,
): Promise<number[]> {
  const root = open({
    path: dataFile,
    noSubdir: true,
    maxDbs: 12,
    mapSize: mapSizeBytes,
    useWritemap: false,
    eventTurnBatching: false,
    compression: false,
  });
  const db = root.openDB({ name: 'holdings', keyEncoding: 'binary', encoding: 'binary' });
  const value = Buffer.alloc(valueBytes, 0x62);
  const out: number[] = [];
  try {
    for (const file of files) {
      const parsed = await parseDepositFile(await readFile(file), DEFAULT_INGEST);
      if ('code' in parsed) throw new Error(`${file}: ${parsed.message}`);
      const keys = parsed.records.map((r) => Buffer.from(`${r.key}\u0000ceiling-probe`));
      const t0 = performance.now();
      root.transactionSync(() => {
        for (const k of keys) db.putSync(k, value);
      });
      out.push(performance.now() - t0);
      root.transactionSync(() => {
        for (const k of keys) db.removeSync(k);
      });
    }
  } finally {
    await root.close();
  }
  return out;
}
