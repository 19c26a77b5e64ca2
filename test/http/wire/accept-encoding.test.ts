import { describe, expect, test } from 'bun:test';
import { acceptsGzip, codedEtag } from '../../../src/http/wire/accept-encoding.ts';

/** Accept-Encoding read by its q-values (RFC 9110, 12.5.3), for the gzip-coded prefix list. */

describe('acceptsGzip', () => {
  test.each([
    [null, false],
    ['', false],
    ['gzip', true],
    ['GZIP', true],
    ['gzip, br', true],
    ['br;q=1, gzip;q=0.5', true],
    ['x-gzip', true],
    ['*', true],
    ['identity', false],
    ['br', false],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['gzip;Q=0', false],
    ['*;q=0', false],
    ['gzip;q=0, *', false], // gzip named: its own weight counts, not the wildcard's
    ['*;q=0, gzip', true],
    ['identity, *;q=0.1', true],
    ['gzip;q=2', false], // not a q-value
    ['gzips', false],
  ])('%j -> %p', (header, gzip) => {
    expect(acceptsGzip(header)).toBe(gzip);
  });
});

test('codedEtag: a strong ETag per content coding', () => {
  expect(codedEtag('"abc123"', 'gzip')).toBe('"abc123-gzip"');
});
