import type { FakeWork } from '../../test/support/crossref-api.ts';

/** Scenario (f)'s works, in the recorded shape of test/fixtures/crossref/lookup-works.json: one article each. */
export function lookupWorks(n: number): FakeWork[] {
  return Array.from({ length: n }, (_, i) => ({
    DOI: lookupDoi(i),
    type: 'journal-article',
    title: [lookupTitle(i)],
    'container-title': ['Journal of Benchmarks'],
    author: [{ given: 'Jane', family: `Doe${i}`, sequence: 'first', affiliation: [] }],
    issued: { 'date-parts': [[2021, 1 + (i % 12), 1 + (i % 28)]] },
    indexed: '2026-01-10',
  }));
}

export const lookupDoi = (i: number) => `10.5555/lookup.${i}`;
export const lookupTitle = (i: number) => `Benchmark work ${i}: a study of lookups`;

/** The metadata entry an integrator would send for work i (a title written another way, as normalisation allows). */
export function lookupEntry(i: number): object {
  return {
    title: lookupTitle(i).toUpperCase().replace(':', ' —'),
    journal: 'Journal of Benchmarks',
    authors: [`Jane Doe${i}`],
    year: 2020,
    uid: `entry-${i}`,
  };
}
