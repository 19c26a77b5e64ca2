import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { basicPassword, bearerToken, keyDigest } from '../../../src/http/routes/api-keys.ts';
import { ConsoleKey, ReportKeys } from '../../../src/http/routes/index.ts';

const basic = (pair: string) => `Basic ${Buffer.from(pair).toString('base64')}`;

/** The one Authorization parser and the one key digest, shared by the console's key and the report keys. */
describe('Authorization header and key digests', () => {
  test('Basic gives the password (any user name, any case of the scheme); Bearer its token; else nothing', () => {
    expect(basicPassword(basic('ops:the-key:with-colon'))).toBe('the-key:with-colon');
    expect(basicPassword(`basic   ${Buffer.from(':k').toString('base64')}`)).toBe('k');
    for (const h of [null, '', 'Basic', basic('no-colon'), basic('ops:'), 'Bearer k', 'Digest x'])
      expect({ h, password: basicPassword(h) }).toEqual({ h, password: undefined });
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    for (const h of [null, 'Bearer', 'Bearer ', basic('ops:k')]) expect(bearerToken(h)).toBeUndefined();
  });

  test('a digest is SHA-256 in base64: one length whatever the key', () => {
    for (const key of ['', 'acme-report-key-0123', 'é'])
      expect(keyDigest(key)).toBe(createHash('sha256').update(key, 'utf8').digest('base64'));
    expect(keyDigest('x'.repeat(10_000)).length).toBe(44);
  });

  test('the console and the report keys read a Basic password alike', () => {
    const consoleKey = new ConsoleKey('console-key-0123456789');
    const reports = new ReportKeys([{ name: 'acme', reportKey: 'acme-report-key-0123' } as never]);
    const ask = (authorization: string) => new Request('http://x/', { headers: { authorization } });
    expect(consoleKey.allows(ask(basic('anyone:console-key-0123456789')))).toBe(true);
    expect(consoleKey.allows(ask('bearer console-key-0123456789'))).toBe(true);
    expect(consoleKey.allows(ask(basic('anyone:acme-report-key-0123')))).toBe(false);
    expect(reports.check(ask(basic('anyone:acme-report-key-0123')), false)).toBe('acme');
    expect(reports.check(ask(basic('anyone:console-key-0123456789')), false)).toBeInstanceOf(Response);
  });
});
