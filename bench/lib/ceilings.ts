import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DEFAULT_INGEST } from '../../src/config/index.ts';
import { parseDepositFile } from '../../src/deposit/index.ts';

/** What this machine allows an ingest, measured in the same run as the figures it bounds. */

/** Read + gunzip + JSON.parse + validation of deposit files with the ingest's own parser, on this thread (one core). */
export async function parseRate(paths: readonly string[]): Promise<{ records: number; seconds: number; recordsPerSecond: number }> {
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
export function sequentialWriteRate(dir: string, bytes = 1024 ** 3): { bytes: number; seconds: number; bytesPerSecond: number } {
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
