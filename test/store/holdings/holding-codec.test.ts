import { expect, test } from 'bun:test';
import { ByteWriter } from '../../../src/bytes/index.ts';
import { ACCESS_TYPES, CONTENT_TYPES } from '../../../src/deposit/index.ts';
import { decodeHolding, writeState } from '../../../src/store/holdings/holding-codec.ts';

/** The state encoding must give back exactly what was deposited, for every enum value and URL shape. */

function roundTrip(
  key: string,
  doi: string,
  accessType: (typeof ACCESS_TYPES)[number] | undefined,
  vor: { url: string; contentType?: (typeof CONTENT_TYPES)[number] }[] | undefined,
) {
  const state = new ByteWriter();
  writeState(state, key, doi, accessType, vor);
  const value = new ByteWriter();
  value.u8(1);
  value.varint(state.pos);
  value.bytes(state.view());
  value.u48(1_700_000_000_000);
  return decodeHolding(key, value.view().slice()).state;
}

test('every access type and content type comes back as deposited', () => {
  for (const accessType of [...ACCESS_TYPES, undefined])
    for (const contentType of [...CONTENT_TYPES, undefined]) {
      const vor = [{ url: 'https://example.org/pdf/10.5555/a.1', ...(contentType ? { contentType } : {}) }];
      const expected = { doi: '10.5555/a.1', ...(accessType ? { accessType } : {}), vor };
      expect(roundTrip('10.5555/a.1', '10.5555/a.1', accessType, vor)).toEqual(expected);
    }
});

test('URLs with the DOI at the end, in the middle, twice, nowhere and with non-ASCII text survive', () => {
  const doi = '10.5555/ABC.2';
  const vor = [
    { url: `https://x.org/${doi}` },
    { url: `https://x.org/${doi}/fulltext?d=1` },
    { url: `https://x.org/${doi}/${doi}` },
    { url: 'https://x.org/article/42' },
    { url: `https://x.org/é/${doi}/ü` },
  ];
  expect(roundTrip('10.5555/abc.2', doi, 'open', vor)).toEqual({ doi, accessType: 'open', vor });
});
