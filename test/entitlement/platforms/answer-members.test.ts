import { describe, expect, test } from 'bun:test';
import { readCustomerID, readLicenses, readLinks } from '../../../src/entitlement/platforms/answer-members.ts';

/**
 * The members of a platform's entry read item by item (`av`, `licenses`, `org.customerID`): each malformed item is
 * dropped alone, the well-formed ones around it kept in order, and only the described members of an item passed on.
 */

const LINK = { url: 'https://alpha.example/av/1.html', contentType: 'text/html' };
const LICENSE = { type: 'cc_by', url: 'https://creativecommons.org/licenses/by/4.0/', startDate: '2021-03-01' };
const long = (n: number) => 'x'.repeat(n);

describe('av', () => {
  const malformed: [string, unknown][] = [
    ['not an object', 'https://alpha.example/a'],
    ['null', null],
    ['no url', { contentType: 'text/html' }],
    ['a url that is not http(s)', { url: 'ftp://alpha.example/a' }],
    ['a url that is no string', { url: 7 }],
    ['a url over 4,096 characters', { url: `https://alpha.example/${long(4096)}` }],
    ['a contentType over 128 characters', { url: 'https://alpha.example/a', contentType: long(129) }],
    ['a contentType that is no string', { url: 'https://alpha.example/a', contentType: ['text/html'] }],
  ];
  for (const [name, item] of malformed)
    test(`an item with ${name} is dropped alone`, () => {
      expect(readLinks([LINK, item, { url: 'http://alpha.example/b' }])).toEqual([
        LINK,
        { url: 'http://alpha.example/b' },
      ]);
    });

  test('the bounds themselves are kept; members other than url and contentType are left out', () => {
    const edge = {
      url: `https://alpha.example/${long(4096 - 'https://alpha.example/'.length)}`,
      contentType: long(128),
    };
    expect(readLinks([edge, { ...LINK, size: 12 }])).toEqual([edge, LINK]);
  });

  test('only the first 32 items are read', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ url: `https://alpha.example/${i}` }));
    expect(readLinks(items)).toEqual(items.slice(0, 32));
  });

  test('no list, an empty one, or one of malformed items only: none', () => {
    for (const value of [undefined, null, 'https://alpha.example/a', LINK, [], [{ url: 'mailto:a@b' }]])
      expect(readLinks(value)).toBeUndefined();
  });
});

describe('licenses', () => {
  const malformed: [string, unknown][] = [
    ['not an object', 'cc_by'],
    ['no type', { url: LICENSE.url, startDate: LICENSE.startDate }],
    ['an empty type', { ...LICENSE, type: '' }],
    ['a type over 128 characters', { ...LICENSE, type: long(129) }],
    ['no url', { type: 'cc_by', startDate: LICENSE.startDate }],
    ['a url that is not http(s)', { ...LICENSE, url: 'creativecommons.org/licenses/by/4.0/' }],
    ['no startDate', { type: 'cc_by', url: LICENSE.url }],
    ['a startDate with a time', { ...LICENSE, startDate: '2021-03-01T00:00:00Z' }],
    ['a startDate of another form', { ...LICENSE, startDate: '2021-3-1' }],
    ['a startDate that is no day (February 30)', { ...LICENSE, startDate: '2021-02-30' }],
    ['a startDate of a 29 February outside a leap year', { ...LICENSE, startDate: '2021-02-29' }],
    ['a startDate of month 13', { ...LICENSE, startDate: '2021-13-01' }],
    ['a startDate that is no string', { ...LICENSE, startDate: 20210301 }],
  ];
  for (const [name, item] of malformed)
    test(`an item with ${name} is dropped alone`, () => {
      const other = {
        type: 'cc_by_nc',
        url: 'https://creativecommons.org/licenses/by-nc/4.0/',
        startDate: '2024-02-29',
      };
      expect(readLicenses([LICENSE, item, other])).toEqual([LICENSE, other]);
    });

  test('members other than type, url and startDate are left out; only the first 32 items are read', () => {
    expect(readLicenses([{ ...LICENSE, note: 'x' }])).toEqual([LICENSE]);
    const items = Array.from({ length: 33 }, (_, i) => ({ ...LICENSE, type: `t${i}` }));
    expect(readLicenses(items)).toEqual(items.slice(0, 32));
  });

  test('no list, an empty one, or one of malformed items only: none', () => {
    for (const value of [undefined, LICENSE, 'cc_by', [], [{ ...LICENSE, startDate: '2021-04-31' }]])
      expect(readLicenses(value)).toBeUndefined();
  });
});

describe('org.customerID', () => {
  test('a string of 1 to 256 characters is read; anything else is none', () => {
    expect(readCustomerID({ customerID: 'cust-42', ipv4: '192.0.2.1' })).toBe('cust-42');
    expect(readCustomerID({ customerID: long(256) })).toBe(long(256));
    for (const org of [
      undefined,
      null,
      'cust-42',
      ['cust-42'],
      {},
      { customerID: '' },
      { customerID: long(257) },
      { customerID: 42 },
      { customerID: { id: 'cust-42' } },
    ])
      expect(readCustomerID(org)).toBeUndefined();
  });
});
