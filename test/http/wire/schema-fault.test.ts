import { expect, test } from 'bun:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { EntitlementsRequest } from '../../../src/entitlement/index.ts';
import { describeSchemaFault } from '../../../src/http/wire/schema-fault.ts';

/** A schema fault in words, named by the field that fails (src/http/wire/schema-fault.ts). */

const check = TypeCompiler.Compile(EntitlementsRequest);
const say = (value: unknown) => describeSchemaFault(check, value, '{...}', 'an entry is a DOI string or an object');

test('a fault inside an object entry names its field and why, not the entry as a whole', () => {
  expect(say({ dois: [{ doi: '10.1/x', uid: 'u'.repeat(257) }] })).toBe('/dois/0/uid: at most 256 characters');
  expect(say({ dois: ['10.1/x', { doi: 5 }] })).toBe('/dois/1/doi: must be a string');
  expect(say({ dois: [{ doi: '10.1/x', colour: 't' }] })).toBe(
    '/dois/0/colour: unexpected property; an entry is a DOI string or an object',
  );
  // a property name as long as the body is not echoed whole
  const long = say({ dois: [{ doi: '10.1/x', ['n'.repeat(60_000)]: 1 }] });
  expect(long).toBe(
    `/dois/0/${'n'.repeat(92)}...(60008 characters): unexpected property; an entry is a DOI string or an object`,
  );
  // neither alternative's type: the entry as a whole
  expect(say({ dois: [5] })).toBe('/dois/0: an entry is a DOI string or an object');
  expect(say({ dois: [null] })).toBe('/dois/0: an entry is a DOI string or an object');
  expect(say({ org: { entityID: '' }, dois: ['10.1/x'] })).toBe('/org/entityID: at least 1 character');
});
