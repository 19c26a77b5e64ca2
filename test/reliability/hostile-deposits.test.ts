import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzLines, runCli, type TestConfig, tempDir, uuid, writeConfig, writeDeposit } from '../support/fixtures.ts';

/**
 * Hostile deposits through the CLI (issue 20, item 3): every file sits in the bucket folder of a store that holds a
 * good deposit, and one `--ingest` takes them all. Each case checks its exact outcome (the `--ingest` report and
 * `--failures`), and that the good deposit's holdings and histories (`--dump --history`) are byte-identical
 * afterwards. Hostile lines aim at the good deposit's DOIs; the valid lines of applied files add `10.5555/new.*`.
 * The daemon's path, the gzip bomb and S3 keys: hostile-deposits-daemon.test.ts.
 */

const KEEP = [
  {
    doi: '10.5555/keep.1',
    accessType: 'open',
    vor: [{ url: 'https://example.org/keep.1.pdf', contentType: 'application/pdf' }],
  },
  { doi: '10.5555/keep.2', accessType: 'paid' },
  { doi: '10.5555/keep.3', accessType: 'free' },
];
/** a valid line that would change the good deposit: only ever inside files that must apply nothing */
const REMOVE_KEEP_1 = { doi: '10.5555/keep.1', deleted: true };

let dir: ReturnType<typeof tempDir>;
let cfg: TestConfig;
let goodBefore: string[];
/** after all the files: the good deposit's lines of `--dump --history` (the `10.5555/new.*` holdings left out) */
let goodAfter: string[];
let doisAfter: string[];
let exitCode: number;
const reports = new Map<string, Record<string, unknown>>();
const failures = new Map<string, Record<string, unknown>>();
const files: { key: string; path: string }[] = [];

/** Puts a file into the bucket folder under acme/ (or the given name) and queues it for the one --ingest. */
function put(bytes: Uint8Array, name = `${uuid()}.jsonl.gz`): string {
  const key = writeDeposit(cfg.bucket, 'acme', [], { bytes, name });
  files.push({ key, path: join(cfg.bucket, key) });
  return key;
}

/** Raw NDJSON bytes: strings and byte arrays as they are, objects as JSON. */
function ndjson(lines: (object | string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const parts = lines.map((l) =>
    l instanceof Uint8Array ? Buffer.from(l) : Buffer.from(typeof l === 'string' ? l : JSON.stringify(l)),
  );
  return new Uint8Array(Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from('\n'), p]))));
}
const gz = (lines: (object | string | Uint8Array)[]) => Bun.gzipSync(ndjson(lines));

/** A file whose first and last lines are valid new DOIs and whose lines in between are hostile. */
function putLines(name: string, hostile: (object | string | Uint8Array)[]): string {
  return put(
    gz([{ doi: `10.5555/new.${name}.first`, accessType: 'open' }, ...hostile, { doi: `10.5555/new.${name}.last` }]),
  );
}

async function dumpHistory(): Promise<string[]> {
  const r = await runCli(['--dump', '--history', '--config', cfg.path]);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.lines;
}
const isNew = (line: string) => (JSON.parse(line) as { doi: string }).doi.startsWith('10.5555/new.');

const K: Record<string, string> = {};

beforeAll(async () => {
  dir = tempDir('doi-holdings-hostile-');
  cfg = writeConfig(dir.path);
  const good = writeDeposit(cfg.bucket, 'acme', KEEP, { mtime: 1_700_000_000 });
  expect((await runCli(['--ingest', '--config', cfg.path, join(cfg.bucket, good)])).code).toBe(0);
  goodBefore = await dumpHistory();
  expect(goodBefore).toHaveLength(3);

  // whole-file faults: each file also holds a valid line that would remove a good holding
  const whole = gzLines([REMOVE_KEEP_1, { doi: '10.5555/new.never' }]);
  K.truncated = put(whole.subarray(0, Math.floor(whole.length / 2)));
  K.notGzip = put(ndjson([REMOVE_KEEP_1]));
  K.trailingGarbage = put(Buffer.concat([whole, Buffer.from('garbage!')]));
  K.trailingAfterNul = put(Buffer.concat([whole, Buffer.from('\0garbage')]));
  K.zeroPadding = put(Buffer.concat([gzLines([{ doi: '10.5555/new.padded' }]), Buffer.alloc(512)]));
  // one stream: the second member goes on with the line the first one broke off
  const members = ['{"doi":"10.5555/new.member.1"}\n{"doi":"10.5555/new.mem', 'ber.2","accessType":"free"}\n'];
  K.multiMember = put(Buffer.concat(members.map((m) => Bun.gzipSync(Buffer.from(m)))));
  K.tooMany = put(gzLines([REMOVE_KEEP_1, ...Array.from({ length: 10_000 }, (_, i) => ({ doi: `10.5555/n${i}` }))]));
  K.empty = put(new Uint8Array(0));
  K.emptyGzip = put(Bun.gzipSync(new Uint8Array(0)));
  K.noGz = put(ndjson([REMOVE_KEEP_1]), `${uuid()}.jsonl`);

  // line faults: the file applies, its hostile lines are rejected one by one
  K.longLine = putLines('long', [
    { doi: '10.5555/keep.1', vor: [{ url: `https://example.org/${'a'.repeat(1 << 20)}` }] },
  ]);
  K.utf8 = putLines('utf8', [
    Buffer.concat([Buffer.from('{"doi":"10.5555/keep.1","accessType":"'), Buffer.from([0xff]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"doi":"10.5555/keep.2'), Buffer.from([0xc0, 0xaf]), Buffer.from('","deleted":true}')]), // overlong "/"
    Buffer.concat([
      Buffer.from('{"doi":"10.5555/keep.3'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('","deleted":true}'),
    ]), // lone surrogate
  ]);
  K.nul = putLines('nul', [
    '{"doi":"10.5555/keep.1\0","deleted":true}',
    '{"doi":"10.5555/keep.1\\u0000","deleted":true}',
    '\0\0\0\0',
    '{"doi":"10.5555/keep.2","deleted":true}\0',
  ]);
  K.proto = putLines('proto', [
    '{"doi":"10.5555/keep.1","__proto__":{"deleted":true}}',
    '{"doi":"10.5555/keep.2","constructor":{"prototype":{"accessType":"open"}}}',
    '{"__proto__":{"doi":"10.5555/keep.3","deleted":true}}',
    '{"doi":"10.5555/keep.1","vor":[{"url":"https://example.org/x","__proto__":{"contentType":"other"}}]}',
  ]);
  K.deep = putLines('deep', [
    `{"doi":"10.5555/keep.1","vor":${'['.repeat(30_000)}${']'.repeat(30_000)}}`,
    `{"doi":"10.5555/keep.2","a":${'{"a":'.repeat(6_000)}1${'}'.repeat(6_000)}}`,
    `${'['.repeat(30_000)}${']'.repeat(30_000)}`,
  ]);
  K.numbers = putLines('numbers', [
    '{"doi":10.5555}',
    '{"doi":"10.5555/keep.1","accessType":1}',
    '{"doi":"10.5555/keep.1","vor":[{"url":1}]}',
    '{"doi":"10.5555/keep.1","deleted":1}',
  ]);
  K.deletedString = putLines('deleted', [{ doi: '10.5555/keep.1', deleted: 'true' }]);
  K.emptyVor = putLines('vor', [{ doi: '10.5555/keep.1', accessType: 'open', vor: [] }]);
  K.javascript = putLines('url', [
    { doi: '10.5555/keep.1', vor: [{ url: 'javascript:alert(document.cookie)' }] },
    { doi: '10.5555/keep.1', vor: [{ url: 'JAVASCRIPT://example.org/%0Aalert(1)' }] },
    { doi: '10.5555/keep.1', vor: [{ url: ' https://example.org/x' }] },
    { doi: '10.5555/keep.1', vor: [{ url: 'data:text/html,<script>alert(1)</script>' }] },
  ]);

  // names a local folder can hold: ".." and "%2e%2e" inside a name are plain characters; backslashes and
  // control characters are refused
  K.dotsInName = put(gzLines([{ doi: '10.5555/new.dots' }]), `a..b-${uuid()}.jsonl.gz`);
  K.percentInName = put(gzLines([{ doi: '10.5555/new.percent' }]), `%2e%2e-${uuid()}.jsonl.gz`);
  K.backslash = put(gzLines([REMOVE_KEEP_1]), `x\\..\\..\\${uuid()}.jsonl.gz`);
  K.control = put(gzLines([REMOVE_KEEP_1]), `\u0001${uuid()}.jsonl.gz`);
  K.newline = put(gzLines([REMOVE_KEEP_1]), `x\ny-${uuid()}.jsonl.gz`);

  // a link in the bucket to a file outside it
  const outside = join(dir.path, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.jsonl.gz'), gzLines([REMOVE_KEEP_1, { doi: '10.5555/new.outside' }]));
  K.symlink = `acme/${uuid()}.jsonl.gz`;
  symlinkSync(join(outside, 'secret.jsonl.gz'), join(cfg.bucket, K.symlink));
  files.push({ key: K.symlink, path: join(cfg.bucket, K.symlink) });

  const r = await runCli(['--ingest', '--config', cfg.path, ...files.map((f) => f.path)]);
  exitCode = r.code;
  for (const line of r.lines) {
    const report = JSON.parse(line) as Record<string, unknown>;
    reports.set(report.key as string, report);
  }
  for (const line of (await runCli(['--failures', '--config', cfg.path])).lines) {
    const f = JSON.parse(line) as Record<string, unknown>;
    failures.set(f.key as string, f);
  }
  const after = await dumpHistory();
  goodAfter = after.filter((l) => !isNew(l));
  doisAfter = after.map((l) => (JSON.parse(l) as { doi: string }).doi);
}, 60_000);

afterAll(() => dir.remove());

/**
 * The good deposit's holdings have no event from this file: it changed none of them. (The last test checks they
 * are byte-identical after all the files; this names the file that would break it.)
 */
function expectGoodDataUntouchedBy(key: string): void {
  expect(goodAfter.filter((l) => l.includes(`"file":${JSON.stringify(key)}`))).toEqual([]);
}

/** The file was quarantined with this code and message (the --ingest report and --failures agree), and nothing of it applied. */
function expectQuarantined(key: string, code: string, message: string): void {
  expect(reports.get(key)).toEqual({ env: 'production', key, outcome: 'quarantined', code, message });
  expect(failures.get(key)).toMatchObject({ kind: 'quarantined', key, code, message, tries: 1 });
  expectGoodDataUntouchedBy(key);
}

/** The file was applied: its first and last lines added, exactly these lines rejected. */
function expectRejectedLines(
  key: string,
  name: string,
  rejected: [line: number, path: string, code: string][],
): Record<string, unknown>[] {
  const report = reports.get(key) as {
    outcome: string;
    counts: Record<string, number>;
    rejectedLines: Record<string, unknown>[];
  };
  expect(report.outcome).toBe('applied');
  expect(report.counts).toMatchObject({
    records: rejected.length + 2,
    added: 2,
    updated: 0,
    removed: 0,
    rejected: rejected.length,
  });
  expect(report.rejectedLines.map((r) => [r.line, r.path, r.code])).toEqual(rejected);
  expect(failures.has(key)).toBe(false);
  expect(doisAfter).toContain(`10.5555/new.${name}.first`);
  expect(doisAfter).toContain(`10.5555/new.${name}.last`);
  expectGoodDataUntouchedBy(key);
  return report.rejectedLines;
}

describe('whole-file faults: quarantined with a code, nothing applied', () => {
  test('a truncated gzip is quarantined GZIP_TRUNCATED', () => {
    expectQuarantined(
      K.truncated!,
      'GZIP_TRUNCATED',
      `${K.truncated}: the gzip stream is truncated (unexpected end of file)`,
    );
  });

  test('a file that is not gzip is quarantined NOT_GZIP', () => {
    expectQuarantined(K.notGzip!, 'NOT_GZIP', `${K.notGzip}: the content is not gzip-compressed (no gzip header)`);
  });

  test('bytes after the gzip stream are GZIP_CORRUPT, also when they start with a zero byte', () => {
    expectQuarantined(
      K.trailingGarbage!,
      'GZIP_CORRUPT',
      `${K.trailingGarbage}: the gzip stream is corrupt: the bytes after its end are neither another gzip member nor zero padding (incorrect header check)`,
    );
    const end = gzLines([REMOVE_KEEP_1, { doi: '10.5555/new.never' }]).length;
    expectQuarantined(
      K.trailingAfterNul!,
      'GZIP_CORRUPT',
      `${K.trailingAfterNul}: the gzip stream is corrupt: 8 bytes after its end (from byte ${end}) are neither another gzip member nor zero padding`,
    );
  });

  test('zero padding after the gzip stream is ignored: the file applies', () => {
    expect(reports.get(K.zeroPadding!)).toMatchObject({
      outcome: 'applied',
      counts: { records: 1, added: 1, rejected: 0 },
    });
    expect(doisAfter).toContain('10.5555/new.padded');
  });

  test('a multi-member gzip is one stream (a line may go on in the next member): it applies', () => {
    expect(reports.get(K.multiMember!)).toMatchObject({
      outcome: 'applied',
      counts: { records: 2, added: 2, rejected: 0 },
    });
    expect(doisAfter).toContain('10.5555/new.member.1');
    expect(doisAfter).toContain('10.5555/new.member.2');
  });

  test('10,001 records are TOO_MANY_RECORDS and none of them applies', () => {
    expectQuarantined(
      K.tooMany!,
      'TOO_MANY_RECORDS',
      `${K.tooMany}: the file has more than 10000 records (line 10001 is record 10001); nothing was applied`,
    );
    expect(doisAfter.filter((d) => /^10\.5555\/n\d/.test(d))).toEqual([]);
  });

  test('an empty file is EMPTY_FILE; an empty gzip stream applies, with no records', () => {
    expectQuarantined(K.empty!, 'EMPTY_FILE', `${K.empty}: the file is empty (0 bytes): not a gzip file`);
    expect(reports.get(K.emptyGzip!)).toMatchObject({
      outcome: 'applied',
      counts: { records: 0, added: 0, rejected: 0 },
      rejectedLines: [],
    });
  });

  test('a .jsonl name without .gz is BAD_EXTENSION', () => {
    expectQuarantined(K.noGz!, 'BAD_EXTENSION', `${K.noGz}: the file name must end in .jsonl.gz`);
  });
});

describe('line faults: the line is rejected with its line, field and code; the rest applies', () => {
  test('a 1 MiB line is LINE_TOO_LONG', () => {
    const [r] = expectRejectedLines(K.longLine!, 'long', [[2, '', 'LINE_TOO_LONG']]);
    expect(r!.message).toBe('the line is over 65536 bytes');
  });

  test('invalid UTF-8 (a stray byte, an overlong form, an encoded surrogate) is INVALID_UTF8 per line', () => {
    expectRejectedLines(K.utf8!, 'utf8', [
      [2, '', 'INVALID_UTF8'],
      [3, '', 'INVALID_UTF8'],
      [4, '', 'INVALID_UTF8'],
    ]);
  });

  test('NUL bytes: raw ones are INVALID_JSON, an escaped one in a DOI is INVALID_DOI', () => {
    const lines = expectRejectedLines(K.nul!, 'nul', [
      [2, '', 'INVALID_JSON'],
      [3, '/doi', 'INVALID_DOI'],
      [4, '', 'INVALID_JSON'],
      [5, '', 'INVALID_JSON'],
    ]);
    expect(lines[1]!.message).toBe(
      'doi "10.5555/keep.1\\u0000": contains a whitespace, control or format character (U+0000) at index 14',
    );
  });

  test('__proto__ and constructor keys are properties that are not allowed (SCHEMA), never prototypes', () => {
    const lines = expectRejectedLines(K.proto!, 'proto', [
      [2, '/__proto__', 'SCHEMA'],
      [3, '/constructor', 'SCHEMA'],
      [4, '/doi', 'SCHEMA'],
      [5, '/vor/0/__proto__', 'SCHEMA'],
    ]);
    expect(lines.map((l) => l.message)).toEqual([
      'property "__proto__" is not allowed (allowed: doi, accessType, deleted, vor)',
      'property "constructor" is not allowed (allowed: doi, accessType, deleted, vor)',
      'doi is required',
      'property "__proto__" is not allowed (allowed: url, contentType)',
    ]);
  });

  test('deep nesting is rejected at its first wrong field, or as not an object', () => {
    expectRejectedLines(K.deep!, 'deep', [
      [2, '/vor/0', 'SCHEMA'],
      [3, '/a', 'SCHEMA'],
      [4, '', 'NOT_AN_OBJECT'],
    ]);
  });

  test('numbers where strings or booleans belong are SCHEMA faults naming the field', () => {
    const lines = expectRejectedLines(K.numbers!, 'numbers', [
      [2, '/doi', 'SCHEMA'],
      [3, '/accessType', 'SCHEMA'],
      [4, '/vor/0/url', 'SCHEMA'],
      [5, '/deleted', 'SCHEMA'],
    ]);
    expect(lines[0]!.message).toBe('must be a string (got 10.5555)');
  });

  test('deleted: "true" is a SCHEMA fault and removes nothing', () => {
    const [r] = expectRejectedLines(K.deletedString!, 'deleted', [[2, '/deleted', 'SCHEMA']]);
    expect(r!.message).toBe('must be true or false (got "true")');
    expect(doisAfter).toContain('10.5555/keep.1');
  });

  test('vor [] is a SCHEMA fault at /vor', () => {
    const [r] = expectRejectedLines(K.emptyVor!, 'vor', [[2, '/vor', 'SCHEMA']]);
    expect(r!.message).toBe('must have at least one item (got [])');
  });

  test('javascript:, data: and other non-http(s) URLs are SCHEMA faults at /vor/0/url', () => {
    const lines = expectRejectedLines(K.javascript!, 'url', [
      [2, '/vor/0/url', 'SCHEMA'],
      [3, '/vor/0/url', 'SCHEMA'],
      [4, '/vor/0/url', 'SCHEMA'],
      [5, '/vor/0/url', 'SCHEMA'],
    ]);
    expect(lines[0]!.message).toBe(
      'must be an http(s) URL, starting http:// or https:// (got "javascript:alert(document.cookie)")',
    );
  });
});

describe('names and links in a local bucket folder', () => {
  test('".." and "%2e%2e" inside a file name are plain characters: the file applies', () => {
    expect(reports.get(K.dotsInName!)).toMatchObject({ outcome: 'applied', counts: { added: 1 } });
    expect(reports.get(K.percentInName!)).toMatchObject({ outcome: 'applied', counts: { added: 1 } });
    expect(doisAfter).toEqual(expect.arrayContaining(['10.5555/new.dots', '10.5555/new.percent']));
  });

  test('a backslash in a name is BAD_PATH', () => {
    expectQuarantined(K.backslash!, 'BAD_PATH', `${K.backslash}: the path contains a backslash`);
  });

  test('control characters in a name are BAD_PATH, the key written as JSON', () => {
    expectQuarantined(K.control!, 'BAD_PATH', `${JSON.stringify(K.control)}: the path contains control characters`);
    expectQuarantined(K.newline!, 'BAD_PATH', `${JSON.stringify(K.newline)}: the path contains control characters`);
  });

  test('a symbolic link to a file outside the bucket is NOT_REGULAR_FILE and is not followed', () => {
    expectQuarantined(
      K.symlink!,
      'NOT_REGULAR_FILE',
      `${K.symlink}: a symbolic link (to ${join(dir.path, 'outside', 'secret.jsonl.gz')}), not a regular file; links in a bucket folder are not followed and only regular files are read`,
    );
    expect(doisAfter).not.toContain('10.5555/new.outside');
  });
});

test('every file has its report; exactly the expected holdings were added; the good deposit is byte-identical', () => {
  expect(exitCode).toBe(1);
  expect([...reports.keys()].sort()).toEqual(files.map((f) => f.key).sort());
  const quarantined = [
    K.truncated,
    K.notGzip,
    K.trailingGarbage,
    K.trailingAfterNul,
    K.tooMany,
    K.empty,
    K.noGz,
    K.backslash,
    K.control,
    K.newline,
    K.symlink,
  ];
  expect([...failures.keys()].sort()).toEqual(quarantined.map((k) => k!).sort());
  const added = [
    'padded',
    'member.1',
    'member.2',
    'dots',
    'percent',
    ...['long', 'utf8', 'nul', 'proto', 'deep', 'numbers', 'deleted', 'vor', 'url'].flatMap((n) => [
      `${n}.first`,
      `${n}.last`,
    ]),
  ];
  expect(doisAfter.filter((d) => d.startsWith('10.5555/new.')).sort()).toEqual(
    added.map((n) => `10.5555/new.${n}`).sort(),
  );
  expect(goodAfter).toEqual(goodBefore);
});
