import { afterEach, beforeEach, expect, test } from 'bun:test';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobWorkersEnded, workerJob } from '../../src/base/worker-script.ts';
import { tempDir } from '../support/fixtures.ts';

// A job that takes `ms`, leaves a mark when it has finished, then answers: as the store read workers do, which
// let go of LMDB before they answer.
const JOB = `
import { writeFileSync } from 'node:fs';
self.onmessage = async (event) => {
  await Bun.sleep(event.data.ms);
  writeFileSync(event.data.mark, 'finished');
  self.postMessage({ ok: true, built: event.data.ms });
};
`;

let dir: ReturnType<typeof tempDir>;
let script: string;
beforeEach(() => {
  dir = tempDir();
  script = join(dir.path, 'job.ts');
  writeFileSync(script, JOB);
});
afterEach(async () => {
  await jobWorkersEnded(10_000);
  dir.remove();
});

test('a cancelled job is not ended mid-job: it finishes, its answer is dropped, and the wait for workers sees it end', async () => {
  const mark = join(dir.path, 'mark');
  const job = workerJob<number>(script, { ms: 300, mark }, 'the test job');
  let answered = false;
  void job.done.then(() => (answered = true));
  job.cancel();
  expect(await jobWorkersEnded(10_000)).toBe(true);
  expect(existsSync(mark)).toBe(true);
  await Bun.sleep(0);
  expect(answered).toBe(false);
});

test('the wait for workers says so when they have not ended in time, and a job not cancelled still answers', async () => {
  const job = workerJob<number>(script, { ms: 1500, mark: join(dir.path, 'mark') }, 'the test job');
  expect(await jobWorkersEnded(50)).toBe(false);
  expect(await job.done).toBe(1500);
  expect(await jobWorkersEnded(10_000)).toBe(true);
});

test('the wait for workers also waits for one started while it waits', async () => {
  const [first, second] = [join(dir.path, 'first'), join(dir.path, 'second')];
  workerJob<number>(script, { ms: 200, mark: first }, 'the test job').cancel();
  const ended = jobWorkersEnded(10_000);
  workerJob<number>(script, { ms: 800, mark: second }, 'the test job').cancel();
  expect(await ended).toBe(true);
  expect([existsSync(first), existsSync(second)]).toEqual([true, true]);
});
