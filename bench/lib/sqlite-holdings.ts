import { Database, type Statement } from 'bun:sqlite';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_INGEST } from '../../src/config/index.ts';
import { parseDepositFile } from '../../src/deposit/index.ts';
import { sha256 } from '../../src/ingest/index.ts';

/**
 * The bun:sqlite reference model of our store's work (bench/ingest-sqlite.ts, bench/scale-sqlite.ts): the same
 * files, parsed by the same parser, and per record the same work as the LMDB store (read the old row, skip a
 * record equal to the stored state, else write the holding and a history row), one transaction per file with its
 * ledger row. WAL with synchronous=NORMAL, which is kinder to SQLite than LMDB's durable commits.
 */
export class SqliteHoldings {
  private readonly db: Database;
  private readonly getOld: Statement<{ live: number; state: string | null }, [string]>;
  private readonly putHolding: Statement;
  private readonly lastEvent: Statement<{ n: number }, [string]>;
  private readonly putEvent: Statement;
  private readonly putFile: Statement;
  private seq = 0;

  constructor(readonly path: string) {
    const db = (this.db = new Database(path, { create: true }));
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    db.exec(`CREATE TABLE holdings (k TEXT PRIMARY KEY, live INTEGER NOT NULL, state TEXT, updated INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE history (k TEXT NOT NULL, n INTEGER NOT NULL, kind TEXT NOT NULL, time INTEGER NOT NULL, file INTEGER NOT NULL,
    old_access TEXT, new_access TEXT, PRIMARY KEY (k, n)) WITHOUT ROWID;
  CREATE TABLE files (key TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, counts TEXT NOT NULL);`);
    this.getOld = db.prepare<{ live: number; state: string | null }, [string]>(
      'SELECT live, state FROM holdings WHERE k = ?',
    );
    this.putHolding = db.prepare('INSERT OR REPLACE INTO holdings (k, live, state, updated) VALUES (?, ?, ?, ?)');
    this.lastEvent = db.prepare<{ n: number }, [string]>('SELECT max(n) AS n FROM history WHERE k = ?');
    this.putEvent = db.prepare(
      'INSERT INTO history (k, n, kind, time, file, old_access, new_access) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.putFile = db.prepare('INSERT INTO files (key, seq, hash, counts) VALUES (?, ?, ?, ?)');
  }

  /** Applies the bucket file `root`/`key` in one transaction; returns its record lines. */
  async applyFile(root: string, key: string): Promise<number> {
    const path = join(root, key);
    const bytes = await readFile(path);
    const time = Math.floor(statSync(path).mtimeMs);
    const parsed = await parseDepositFile(bytes, DEFAULT_INGEST);
    if ('code' in parsed) throw new Error(`${key}: ${parsed.message}`);
    const platform = key.slice(0, key.indexOf('/'));
    const file = ++this.seq;
    const counts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
    this.db.transaction(() => {
      for (const { key: doiKey, record } of parsed.records) {
        const k = `${doiKey}\u0000${platform}`;
        const old = this.getOld.get(k);
        const oldAccess = old?.live ? (JSON.parse(old.state!).accessType ?? null) : null;
        const event = (kind: string, newAccess: string | null) => {
          const n = old ? (this.lastEvent.get(k)?.n ?? 0) + 1 : 1;
          this.putEvent.run(k, n, kind, time, file, oldAccess, newAccess);
        };
        if (record.deleted) {
          if (!old?.live) continue;
          this.putHolding.run(k, 0, null, time);
          event('removed', null);
          counts.removed++;
          continue;
        }
        const state = JSON.stringify({ doi: record.doi, accessType: record.accessType, vor: record.vor });
        if (old?.live && old.state === state) {
          counts.unchanged++;
          continue;
        }
        this.putHolding.run(k, 1, state, time);
        event(!old ? 'added' : old.live ? 'updated' : 're-added', record.accessType ?? null);
        if (old?.live) counts.updated++;
        else counts.added++;
      }
      this.putFile.run(key, file, sha256(bytes), JSON.stringify(counts));
    })();
    return parsed.recordLines;
  }

  /** The database file's bytes per holding row, after a checkpoint has moved the WAL into it. */
  bytesPerHolding(): number {
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const { n: rows } = this.db.prepare<{ n: number }, []>('SELECT count(*) AS n FROM holdings').get()!;
    return statSync(this.path).size / rows;
  }

  close(): void {
    this.db.close();
  }
}
