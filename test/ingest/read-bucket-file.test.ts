import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBucketFile, sha256 } from '../../src/ingest/read-bucket-file.ts';
import { tempDir } from '../support/fixtures.ts';

/** Reading one bucket file: all of it, with its identity, and never more than the size rule allows. */

let dir: ReturnType<typeof tempDir>;
beforeEach(() => (dir = tempDir()));
afterEach(() => dir.remove());

function put(key: string, bytes: Uint8Array): void {
  mkdirSync(join(dir.path, key, '..'), { recursive: true });
  writeFileSync(join(dir.path, key), bytes);
}

test('a file is read whole, with its size and hash', async () => {
  const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) & 255);
  put('acme/a.jsonl.gz', bytes);
  const file = await readBucketFile(dir.path, 'acme/a.jsonl.gz', bytes.length);
  expect(file.bytes).toEqual(bytes);
  expect(file.size).toBe(bytes.length);
  expect(file.hash).toBe(sha256(bytes));
  put('acme/empty.jsonl.gz', new Uint8Array(0));
  expect((await readBucketFile(dir.path, 'acme/empty.jsonl.gz', 10)).bytes.length).toBe(0);
});

test('a file larger than the bound it is read with (it grew after its size was checked) is not taken: read again later', async () => {
  put('acme/big.jsonl.gz', new Uint8Array(1001));
  const read = readBucketFile(dir.path, 'acme/big.jsonl.gz', 1000);
  expect(read).rejects.toMatchObject({
    code: 'EAGAIN',
    message: expect.stringContaining('acme/big.jsonl.gz changed while it was read'),
  });
  await read.catch(() => undefined);
});

test('a folder under a file key is a read error (EISDIR), not an empty file', async () => {
  mkdirSync(join(dir.path, 'acme', 'folder.jsonl.gz'), { recursive: true });
  expect(readBucketFile(dir.path, 'acme/folder.jsonl.gz', 1000)).rejects.toMatchObject({ code: 'EISDIR' });
});
