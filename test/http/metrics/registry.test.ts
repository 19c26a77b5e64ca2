import { expect, test } from 'bun:test';
import { Registry } from 'prom-client';
import { gauge, oncePerScrape, scrape } from '../../../src/http/metrics/registry.ts';

/**
 * A value several families read at scrape time is read once a scrape (http/metrics/registry.ts, oncePerScrape),
 * so the families agree with each other, and read anew at the next scrape.
 */

test('two families reading one value see one read a scrape, and the next scrape reads again', async () => {
  let reads = 0;
  let head = 7;
  const value = oncePerScrape(() => {
    reads++;
    return head;
  });
  const registry = new Registry();
  gauge(registry, 'test_commit', 'the commit', [], (set) => set({}, value()));
  gauge(registry, 'test_commit_again', 'the same commit', [], (set) => set({}, value()));

  const first = await scrape(registry);
  expect(reads).toBe(1);
  expect(first).toContain('test_commit 7');
  expect(first).toContain('test_commit_again 7');

  head = 8;
  const second = await scrape(registry);
  expect(reads).toBe(2);
  expect(second).toContain('test_commit 8');
  expect(second).toContain('test_commit_again 8');
});
