import { Store } from '../../src/store/index.ts';
import { randomFiles } from './random-deposits.ts';

/**
 * A process that applies random files as one sorted pass and kills itself with SIGKILL after chunk `killAfter`
 * commits (test/store/sorted-pass/sorted-pass.test.ts): a crash at a known place, no timing involved.
 * Arguments: store folder, seed, file count, chunk records, killAfter.
 */
const [dir, seed, count, chunkRecords, killAfter] = process.argv.slice(2) as [string, string, string, string, string];
const store = Store.open(dir, 'production', { mapSizeBytes: 1 << 28 });
const builder = store.sortedPassBuilder();
const files = randomFiles(Number(seed), Number(count));
for (let i = 0; i < files.length; i += 7) builder.add(files.slice(i, i + 7));
let chunks = 0;
await store.applySortedPass(builder, {
  chunkRecords: Number(chunkRecords),
  onChunk: () => {
    if (++chunks === Number(killAfter)) process.kill(process.pid, 'SIGKILL');
  },
});
console.log('the pass ended before the kill');
