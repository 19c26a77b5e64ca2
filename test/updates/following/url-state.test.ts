import { expect, test } from 'bun:test';
import { fault } from '../../../src/base/fault.ts';
import type { SourceResult } from '../../../src/updates/import/source.ts';
import { nextUrlState } from '../../../src/updates/index.ts';

/** What the store keeps of an update URL after each fetch (src/updates/following/url-state.ts). */

const imported = (state: SourceResult['state'], rows: number, used: number, works: number): SourceResult => ({
  source: 'https://rw.example/rw.csv',
  format: 'retraction-watch-csv',
  parsed: { report: { rows, used, skipped: {}, firstSkipped: [] }, works },
  applied: {},
  ...(state ? { state } : {}),
});

test('an import: the answer validators, the success, its figures; a failure after it keeps them and says why', () => {
  const first = nextUrlState(
    {},
    imported({ etag: '"v1"', lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT' }, 3, 2, 2),
    1000,
  );
  expect(first).toEqual({
    etag: '"v1"',
    lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT',
    lastSuccessAt: 1000,
    last: { at: 1000, rows: 3, used: 2, works: 2 },
  });
  const failed = nextUrlState(first, fault('SOURCE_HTTP_ERROR', 'HTTP 503'), 2000);
  expect(failed).toEqual({
    ...first,
    lastFailureAt: 2000,
    lastError: { code: 'SOURCE_HTTP_ERROR', message: 'HTTP 503' },
  });
  // not modified: a success, the last import's figures and the validators kept
  const same = nextUrlState(failed, { notModified: true }, 3000);
  expect(same).toEqual({ ...failed, lastSuccessAt: 3000 });
});

test('a new version without validators drops the old ones (they named the old version); the last failure is kept', () => {
  const before = {
    etag: '"v1"',
    lastSuccessAt: 1000,
    lastFailureAt: 1500,
    lastError: { code: 'SOURCE_HTTP_ERROR', message: 'HTTP 503' },
    last: { at: 1000, rows: 3, used: 2, works: 2 },
  };
  expect(nextUrlState(before, imported(undefined, 5, 5, 4), 2000)).toEqual({
    lastSuccessAt: 2000,
    lastFailureAt: 1500,
    lastError: { code: 'SOURCE_HTTP_ERROR', message: 'HTTP 503' },
    last: { at: 2000, rows: 5, used: 5, works: 4 },
  });
});
