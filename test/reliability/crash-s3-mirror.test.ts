import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SAME_SECOND_GUARD_MS } from '../../src/bucket/index.ts';
import { tempDir } from '../support/fixtures.ts';
import { S3_CREDENTIALS, type S3Server, startS3rver } from '../support/s3rver.ts';
import {
  between,
  type Child,
  Children,
  crashSettings,
  dumpHistory,
  firstDifference,
  generateDeposits,
  isEvent,
  ledgerProblems,
  opsTotal,
  readLedger,
  seconds,
} from './crash-support.ts';

/**
 * Crash safety of the S3 mirror, timed from the inside (issue 20, item 1; docs/reliability.md). s3rver holds 150
 * deposit objects (1,000 lines each, overlapping DOIs on two platforms); a daemon whose production bucket is that
 * S3 bucket starts, mirrors it (list, download 8 at a time into `.s3-partial/`, rename into place in
 * (LastModified, key) order, record `.s3-mirror-state.json`, hand on to the ingestor, which applies while the
 * round goes on). The test waits for its k-th `file.applied` line (k seeded, small against the objects still to
 * mirror, so the round is still downloading), waits 0-80 ms more, SIGKILLs it, checks the mirror folder and the
 * store, restarts it, and so on; then lets it finish. At every kill: the files in place are exactly the first
 * objects in apply order, each with the object's bytes (never a partial one); every object the state file
 * records is in place; the ledger holds the first files in apply order, each applied once. At the end every
 * object is mirrored once (no `.superseded/` copy) and applied once, and `--dump --history` is byte-identical to
 * that of a second replica that mirrored the same bucket without being killed (the clean run: replicas apply
 * the same files in the same order, docs/design.md, "Apply order and replica convergence"). A replica takes 5
 * kills at most (while 16 or more objects are still to mirror); more kills (`make soak`) go to new replicas.
 */

const OBJECTS = 150;
const RECORDS = 1_000;
const ENV = { TEST_S3_KEY: S3_CREDENTIALS.accessKeyId, TEST_S3_SECRET: S3_CREDENTIALS.secretAccessKey };
const BUCKET = 'crash';
/** kills per replica at most; then it finishes and is checked, and a new replica takes the next kills */
const KILLS_PER_ROUND = 5;

const s = crashSettings('crash-s3-mirror');
let s3: S3Server;
let dir: ReturnType<typeof tempDir>;
const children = new Children();

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3.dispose();
});
beforeEach(() => {
  dir = tempDir('doi-holdings-crash-s3-');
});
afterEach(async () => {
  await children.killAll();
  dir.remove();
});

/** A replica's config: production is the S3 bucket, mirrored into `<name>/mirror`, its store in `<name>/db`. */
function replica(name: string): string {
  const path = join(dir.path, `${name}.toml`);
  writeFileSync(
    path,
    `[server]
listen = "127.0.0.1:0"
[store]
dir = "${name}/db"
mapSizeGiB = 1
[ingest]
retryBaseMs = 20
[buckets.production]
kind = "s3"
path = "${name}/mirror"
endpoint = "${s3.endpoint}"
region = "us-east-1"
bucket = "${BUCKET}"
forcePathStyle = true
accessKeyIdEnv = "TEST_S3_KEY"
secretAccessKeyEnv = "TEST_S3_SECRET"
pollSeconds = 0.2
[[platforms]]
name = "acme"
[[platforms]]
name = "beta"
`,
  );
  return path;
}

function daemon(config: string): Child {
  return children.start(['--config', config], { env: ENV });
}

/** The deposit files in a mirror folder (bucket keys), hidden bookkeeping left out. */
function mirrored(mirror: string): string[] {
  if (!existsSync(mirror)) return [];
  return readdirSync(mirror, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${e.parentPath.slice(mirror.length + 1)}/${e.name}`.replace(/^\//, ''))
    .filter((k) => !k.split('/').some((p) => p.startsWith('.')));
}

/** The keys whose file in the mirror is not byte for byte the uploaded object. */
function notWhole(mirror: string, keys: readonly string[], bytesOf: ReadonlyMap<string, Uint8Array>): string[] {
  return keys.filter((key) => Buffer.compare(readFileSync(join(mirror, key)), bytesOf.get(key)!) !== 0);
}

const keyOf = (line: string) => (JSON.parse(line) as { key: string }).key;

test(
  `SIGKILL during an S3 mirror round, ${s.kills} times at a seeded k-th file.applied line + 0-80 ms: every object mirrored and applied once, the dump equals a clean replica's`,
  async () => {
    const t0 = performance.now();
    await s3.createBucket(BUCKET);
    const deposits = generateDeposits(s.rng, {
      files: OBJECTS,
      records: RECORDS,
      platforms: ['acme', 'beta'],
      pool: 15_000,
    });
    const bytesOf = new Map(deposits.map((d) => [d.key, d.bytes]));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < deposits.length) {
          const d = deposits[next++]!;
          await s3.put(BUCKET, d.key, d.bytes);
        }
      }),
    );
    // the apply order, from the bucket's own listing: (LastModified, key); S3 gives LastModified to the second
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(listed.IsTruncated).toBe(false);
    const order = (listed.Contents ?? [])
      .map((o) => ({ key: o.Key!, at: o.LastModified!.getTime() }))
      .sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : 1))
      .map((o) => o.key);
    expect([...order].sort()).toEqual([...bytesOf.keys()].sort());
    s.say(
      `${OBJECTS} objects of ${RECORDS} lines uploaded, ${JSON.stringify(opsTotal(deposits))} (${seconds(performance.now() - t0)})`,
    );
    await Bun.sleep(SAME_SECOND_GUARD_MS + 100); // past the mirror's same-second guard: the first round takes them all

    // the clean run: a replica mirrors the bucket untouched
    let t = performance.now();
    const cleanCfg = replica('clean');
    const clean = daemon(cleanCfg);
    await clean.nth(isEvent('file.applied'), OBJECTS, 60_000);
    expect(await clean.stop()).toBe(0);
    expect(ledgerProblems(await readLedger(join(dir.path, 'clean', 'db')), order)).toEqual([]);
    const want = await dumpHistory(cleanCfg, [], ENV);
    expect(want.split('\n').length).toBeGreaterThan(10_000);
    s.say(`clean replica and its dump: ${seconds(performance.now() - t)}, ${want.length.toLocaleString('en')} bytes`);

    let killsLeft = s.kills;
    let midRound = 0;
    let round = 0;
    while (killsLeft > 0) {
      // each round: a new replica (its own mirror and store) on the same bucket, killed up to KILLS_PER_ROUND times
      round++;
      const cfg = replica(`r${round}`);
      const mirror = join(dir.path, `r${round}`, 'mirror');
      const store = join(dir.path, `r${round}`, 'db');
      const stateOf = () =>
        JSON.parse(readFileSync(join(mirror, '.s3-mirror-state.json'), 'utf8')) as Record<string, unknown>;
      const logged = new Set<string>();
      let applied = 0;
      for (let j = 0; j < KILLS_PER_ROUND && killsLeft > 0; j++) {
        const inPlace = mirrored(mirror).length;
        const toMirror = OBJECTS - inPlace;
        if (toMirror < 16) break; // too few left to land a kill in a round that downloads: the next round takes the rest
        const k = between(s.rng, 1, Math.max(1, Math.floor(toMirror / 8)));
        const delay = between(s.rng, 0, 80);
        t = performance.now();
        const d = daemon(cfg);
        await d.nth(isEvent('file.applied'), k, 60_000);
        await Bun.sleep(delay);
        const roundOver = d.lines.some(isEvent('s3.synced'));
        const alive = !d.exited;
        await d.kill();
        killsLeft--;
        expect(alive).toBe(true);
        if (!roundOver) midRound++;

        // the mirror: the first objects in apply order, each whole; the state file names only files in place
        const files = mirrored(mirror);
        const now = files.length;
        expect(new Set(files)).toEqual(new Set(order.slice(0, now)));
        expect(notWhole(mirror, files, bytesOf)).toEqual([]);
        const state = stateOf();
        expect(Object.keys(state).filter((key) => !files.includes(key))).toEqual([]);
        // the store: the first files in apply order, each applied once; none applied that is not in place
        for (const l of d.lines.filter(isEvent('file.applied'))) {
          expect(logged.has(keyOf(l))).toBe(false);
          logged.add(keyOf(l));
        }
        const ledger = await readLedger(store);
        const done = ledger.entries.length;
        expect(ledgerProblems(ledger, order.slice(0, done))).toEqual([]);
        expect(done).toBeLessThanOrEqual(now);
        for (const key of order.slice(0, done)) logged.add(key); // a file of the killed transaction is applied but not logged
        s.say(
          `round ${round} kill ${s.kills - killsLeft}/${s.kills}: ${toMirror} objects to mirror, k=${k}, delay=${delay} ms -> ${roundOver ? 'after the round ended' : 'mid-round'}: ` +
            `${now - inPlace} mirrored (${now}/${OBJECTS} in place, ${Object.keys(state).length} in the state file), ${done - applied} applied (${done}/${OBJECTS}), ${seconds(performance.now() - t)}`,
        );
        applied = done;
      }

      // restart untouched: it mirrors and applies the rest
      t = performance.now();
      const toRecord =
        OBJECTS - (existsSync(join(mirror, '.s3-mirror-state.json')) ? Object.keys(stateOf()).length : 0);
      const last = daemon(cfg);
      if (applied < OBJECTS) await last.nth(isEvent('file.applied'), OBJECTS - applied, 60_000);
      if (toRecord > 0) await last.nth(isEvent('s3.synced'), 1, 30_000); // the round that records the rest has ended
      // started before it is stopped: when the kills left nothing to do, a stop at once would come before the
      // process catches signals at all (its first line), and end it by the signal's default action (exit 143)
      await last.nth(isEvent('daemon.started'), 1, 30_000);
      expect(await last.stop()).toBe(0);
      for (const l of last.lines.filter(isEvent('file.applied'))) {
        expect(logged.has(keyOf(l))).toBe(false);
        logged.add(keyOf(l));
      }
      expect(mirrored(mirror).sort()).toEqual([...order].sort());
      expect(notWhole(mirror, order, bytesOf)).toEqual([]);
      expect(existsSync(join(mirror, '.superseded'))).toBe(false);
      expect(Object.keys(stateOf()).sort()).toEqual([...order].sort());
      expect(ledgerProblems(await readLedger(store), order)).toEqual([]);
      expect(firstDifference(await dumpHistory(cfg, [], ENV), want)).toBeUndefined();
      s.say(
        `round ${round}: the last run mirrored and applied the rest; every object mirrored and applied once, dump byte-identical to the clean replica's (${seconds(performance.now() - t)})`,
      );
    }
    s.say(`${midRound} of ${s.kills} kills landed mid-round; done in ${seconds(performance.now() - t0)}`);
    expect(midRound).toBeGreaterThan(0);
  },
  90_000 + s.kills * 12_000,
);
