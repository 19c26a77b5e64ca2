import { expect, test } from 'bun:test';
import { Progress } from '../../src/cli/progress.ts';

/** The progress line of long CLI work: on a terminal only, rewritten in place, at most 5 times a second. */

test('off a terminal nothing is written, and the text is never even made', () => {
  const written: string[] = [];
  const p = new Progress(false, (t) => written.push(t));
  p.update(() => {
    throw new Error('not called');
  });
  p.done();
  expect(written).toEqual([]);
});

test('on a terminal: one line rewritten with \\r, throttled, ended with a newline once', async () => {
  const written: string[] = [];
  const p = new Progress(true, (t) => written.push(t));
  p.update((s) => `1 of 3 files, ${s} s`);
  p.update(() => '2 of 3 files'); // within 200 ms of the first: skipped
  await Bun.sleep(210);
  p.update(() => '3 of 3 files');
  p.done();
  p.done();
  expect(written).toHaveLength(3);
  expect(written[0]).toMatch(/^\r1 of 3 files, 0\.\d s\x1b\[K$/);
  expect(written[1]).toBe('\r3 of 3 files\x1b[K');
  expect(written[2]).toBe('\n');
});
