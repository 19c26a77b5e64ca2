/**
 * The bun:sqlite reference for scenarios (a) and (b): the same files, parsed by the same parser, and per record
 * the same work as the LMDB store (read the old row, skip a record equal to the stored state, else write the
 * holding and a history row), one transaction per file with its ledger row. WAL with synchronous=NORMAL, which
 * is kinder to SQLite than LMDB's durable commits. Prints one JSON line.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_INGEST } from '../src/config/index.ts';
import { parseDepositFile } from '../src/deposit/index.ts';
import { sha256 } from '../src/ingest/index.ts';
import { percentile } from './lib/measure.ts';
import type { Manifest } from './ingest-generate.ts';

const [dataDir, workDir] = process.argv.slice(2);
if (!dataDir || !workDir) throw new Error('usage: bun bench/ingest-sqlite.ts DATA_DIR WORK_DIR');
const manifest = JSON.parse(readFileSync(join(dataDir, 'manifest.json'), 'utf8')) as Manifest;

rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const path = join(workDir, 'holdings.sqlite');
const db = new Database(path, { create: true });
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
db.exec(`CREATE TABLE holdings (k TEXT PRIMARY KEY, live INTEGER NOT NULL, state TEXT, updated INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE history (k TEXT NOT NULL, n INTEGER NOT NULL, kind TEXT NOT NULL, time INTEGER NOT NULL, file INTEGER NOT NULL,
    old_access TEXT, new_access TEXT, PRIMARY KEY (k, n)) WITHOUT ROWID;
  CREATE TABLE files (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, counts TEXT NOT NULL);`);
const getOld = db.prepare<{ live: number; state: string | null }, [string]>('SELECT live, state FROM holdings WHERE k = ?');
const putHolding = db.prepare('INSERT OR REPLACE INTO holdings (k, live, state, updated) VALUES (?, ?, ?, ?)');
const lastEvent = db.prepare<{ n: number }, [string]>('SELECT max(n) AS n FROM history WHERE k = ?');
const putEvent = db.prepare('INSERT INTO history (k, n, kind, time, file, old_access, new_access) VALUES (?, ?, ?, ?, ?, ?, ?)');
const putFile = db.prepare('INSERT INTO files (key, seq, hash, counts) VALUES (?, ?, ?, ?)');
let seq = 0;

async function applyFile(root: string, key: string): Promise<number> {
  const path = join(root, key);
  const bytes = await readFile(path);
  const time = Math.floor(statSync(path).mtimeMs);
  const parsed = await parseDepositFile(bytes, DEFAULT_INGEST);
  if ('code' in parsed) throw new Error(`${key}: ${parsed.message}`);
  const platform = key.slice(0, key.indexOf('/'));
  const file = ++seq;
  const counts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
  db.transaction(() => {
    for (const { key: doiKey, record } of parsed.records) {
      const k = `${doiKey}\u0000${platform}`;
      const old = getOld.get(k);
      const oldAccess = old?.live ? (JSON.parse(old.state!).accessType ?? null) : null;
      const event = (kind: string, newAccess: string | null) => {
        const n = old ? (lastEvent.get(k)?.n ?? 0) + 1 : 1;
        putEvent.run(k, n, kind, time, file, oldAccess, newAccess);
      };
      if (record.deleted) {
        if (!old?.live) continue;
        putHolding.run(k, 0, null, time);
        event('removed', null);
        counts.removed++;
        continue;
      }
      const state = JSON.stringify({ doi: record.doi, accessType: record.accessType, vor: record.vor });
      if (old?.live && old.state === state) {
        counts.unchanged++;
        continue;
      }
      putHolding.run(k, 1, state, time);
      event(!old ? 'added' : old.live ? 'updated' : 're-added', record.accessType ?? null);
      if (old?.live) counts.updated++;
      else counts.added++;
    }
    putFile.run(key, file, sha256(bytes), JSON.stringify(counts));
  })();
  return parsed.recordLines;
}

async function scenario(keys: string[]): Promise<{ records: number; seconds: number; recordsPerSecond: number; p50Ms: number; p95Ms: number }> {
  const times: number[] = [];
  let records = 0;
  const t0 = performance.now();
  for (const key of keys) {
    const t = performance.now();
    records += await applyFile(join(dataDir, 'bucket'), key);
    times.push(performance.now() - t);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { records, seconds, recordsPerSecond: records / seconds, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95) };
}

const a = await scenario(manifest.a);
db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
const { n: rows } = db.prepare<{ n: number }, []>('SELECT count(*) AS n FROM holdings').get()!;
const bytesPerHolding = statSync(path).size / rows;
const b = await scenario(manifest.b);
db.close();
rmSync(workDir, { recursive: true, force: true });
console.log(JSON.stringify({ a, b, bytesPerHolding }));
