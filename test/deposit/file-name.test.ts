import { describe, expect, test } from 'bun:test';
import type { Fault } from '../../src/base/fault.ts';
import { fileNameProblem, isHiddenOrTemp, parseDepositPath } from '../../src/deposit/index.ts';

/** docs/interface.md, "Depositing holdings": `<platform>/<name>.jsonl.gz`, a registered platform, a name with an RFC 4122 UUID. */

const PLATFORMS: ReadonlySet<string> = new Set(['acme', 'beta-press']);
const U = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function faultOf(key: string): Fault {
  const r = parseDepositPath(key, PLATFORMS);
  if (!('code' in r)) throw new Error(`expected a fault for ${JSON.stringify(key)}, got ${JSON.stringify(r)}`);
  return r;
}

describe('parseDepositPath: accepted keys', () => {
  test('<platform>/<uuid>.jsonl.gz gives platform, name and key', () => {
    expect(parseDepositPath(`acme/${U}.jsonl.gz`, PLATFORMS)).toEqual({
      platform: 'acme',
      name: `${U}.jsonl.gz`,
      key: `acme/${U}.jsonl.gz`,
    });
    expect(parseDepositPath(`beta-press/${U}.jsonl.gz`, PLATFORMS)).toEqual({
      platform: 'beta-press',
      name: `${U}.jsonl.gz`,
      key: `beta-press/${U}.jsonl.gz`,
    });
  });

  test('the UUID is case-insensitive and of any version', () => {
    for (const u of [U.toUpperCase(), '3f2504e0-4f89-11d3-9a0c-0305e82c3301', '01890a5d-ac96-774b-bcce-b302099a8057']) {
      const r = parseDepositPath(`acme/${u}.jsonl.gz`, PLATFORMS);
      expect(r).toEqual({ platform: 'acme', name: `${u}.jsonl.gz`, key: `acme/${u}.jsonl.gz` });
    }
  });

  test('the name only has to contain the UUID', () => {
    const name = `holdings-2026-11-01-${U}.jsonl.gz`;
    expect(parseDepositPath(`acme/${name}`, PLATFORMS)).toEqual({ platform: 'acme', name, key: `acme/${name}` });
  });
});

describe('parseDepositPath: rejected keys, each with a code and a reason naming the key', () => {
  test('a root-level file is not in a platform folder', () => {
    const f = faultOf(`${U}.jsonl.gz`);
    expect(f.code).toBe('NOT_IN_PLATFORM_FOLDER');
    expect(f.message).toBe(`${U}.jsonl.gz: files must be inside a platform folder (<platform>/<name>.jsonl.gz)`);
  });

  test('an unregistered platform folder', () => {
    const f = faultOf(`other/${U}.jsonl.gz`);
    expect(f.code).toBe('UNKNOWN_PLATFORM');
    expect(f.message).toBe(`other/${U}.jsonl.gz: platform "other" is not registered in the config`);
  });

  test('platform names are matched exactly (case-sensitive)', () => {
    expect(faultOf(`ACME/${U}.jsonl.gz`).code).toBe('UNKNOWN_PLATFORM');
  });

  test('the platform check uses the set it is given', () => {
    const key = `acme/${U}.jsonl.gz`;
    expect('code' in parseDepositPath(key, new Set(['acme']))).toBe(false);
    expect(parseDepositPath(key, new Set(['beta-press']))).toEqual({
      code: 'UNKNOWN_PLATFORM',
      message: `${key}: platform "acme" is not registered in the config`,
    });
    expect((parseDepositPath(key, new Set()) as Fault).code).toBe('UNKNOWN_PLATFORM');
  });

  test.each([
    ['deeper nesting', `acme/sub/${U}.jsonl.gz`],
    ['nesting under an unknown folder', `acme/2026/11/${U}.jsonl.gz`],
    ['a leading slash', `/acme/${U}.jsonl.gz`],
    ['an empty segment', `acme//${U}.jsonl.gz`],
    ['a folder only', 'acme/'],
  ])('nesting: %s', (_what, key) => {
    const f = faultOf(key);
    expect(f.code).toBe('NESTED_PATH');
    expect(f.message).toBe(
      `${key}: files must sit directly in a platform folder (<platform>/<name>.jsonl.gz), not deeper`,
    );
  });

  test.each([
    ['.. as the name segment', `acme/../${U}.jsonl.gz`],
    ['.. as the platform', `../${U}.jsonl.gz`],
    ['.. leading to a registered platform', `../acme/${U}.jsonl.gz`],
    ['. segment', `./acme/${U}.jsonl.gz`],
    ['.. inside a platform folder', `acme/..`],
  ])('traversal: %s', (_what, key) => {
    const f = faultOf(key);
    expect(f.code).toBe('BAD_PATH');
    expect(f.message).toBe(`${key}: the path contains "." or ".." segments`);
  });

  test.each([
    ['newline', `acme/${U}\n.jsonl.gz`],
    ['NUL', `acme/${U}\u0000.jsonl.gz`],
    ['tab', `acme\t/${U}.jsonl.gz`],
    ['DEL', `acme/${U}\u007f.jsonl.gz`],
    ['C1 control', `acme/\u0085${U}.jsonl.gz`],
  ])('control characters: %s', (_what, key) => {
    const f = faultOf(key);
    expect(f.code).toBe('BAD_PATH');
    expect(f.message).toBe(`${JSON.stringify(key)}: the path contains control characters`);
  });

  test.each([
    ['.json.gz', `acme/${U}.json.gz`],
    ['.jsonl (not compressed)', `acme/${U}.jsonl`],
    ['.gz only', `acme/${U}.gz`],
    ['.ndjson.gz', `acme/${U}.ndjson.gz`],
    ['upper-case extension', `acme/${U}.JSONL.GZ`],
    ['a suffix after the extension', `acme/${U}.jsonl.gz.bak`],
    ['no extension', `acme/${U}`],
  ])('wrong extension: %s', (_what, key) => {
    const f = faultOf(key);
    expect(f.code).toBe('BAD_EXTENSION');
    expect(f.message).toBe(`${key}: the file name must end in .jsonl.gz`);
  });

  test.each([
    ['a plain name', 'acme/holdings.jsonl.gz'],
    ['the extension alone', 'acme/.jsonl.gz'],
    ['a UUID missing one hex digit', `acme/${U.slice(1)}.jsonl.gz`],
    ['a UUID without hyphens', `acme/${U.replaceAll('-', '')}.jsonl.gz`],
    ['a non-hex character in the UUID', `acme/${U.replace('3f25', '3g25')}.jsonl.gz`],
    ['a date instead of a UUID', 'acme/2026-11-01.jsonl.gz'],
  ])('name without a UUID: %s', (_what, key) => {
    const f = faultOf(key);
    expect(f.code).toBe('NAME_WITHOUT_UUID');
    expect(f.message).toBe(`${key}: the file name must contain a UUID (RFC 4122) so that it is unique`);
  });

  test('rules are checked in order: traversal before platform, platform before name', () => {
    expect(faultOf(`other/../x.txt`).code).toBe('BAD_PATH');
    expect(faultOf(`other/x.txt`).code).toBe('UNKNOWN_PLATFORM');
    expect(faultOf(`acme/x.txt`).code).toBe('BAD_EXTENSION');
  });
});

describe('fileNameProblem: the name alone', () => {
  test('a UUID name with the extension has no problem', () => {
    expect(fileNameProblem(`${U}.jsonl.gz`)).toBeUndefined();
    expect(fileNameProblem(`prefix_${U.toUpperCase()}_suffix.jsonl.gz`)).toBeUndefined();
  });

  test('the extension is checked before the UUID', () => {
    expect(fileNameProblem('holdings.txt')).toEqual({
      code: 'BAD_EXTENSION',
      message: 'the file name must end in .jsonl.gz',
    });
    expect(fileNameProblem('holdings.jsonl.gz')).toEqual({
      code: 'NAME_WITHOUT_UUID',
      message: 'the file name must contain a UUID (RFC 4122) so that it is unique',
    });
  });
});

describe('isHiddenOrTemp: files the bucket watcher ignores', () => {
  test.each([
    ['a dotfile in a platform folder', `acme/.${U}.jsonl.gz`],
    ['a hidden platform folder', `.acme/${U}.jsonl.gz`],
    ['a root-level dotfile', '.DS_Store'],
    ['a hidden folder deeper down', `acme/.tmp/${U}.jsonl.gz`],
    ['a .partial download', `acme/${U}.jsonl.gz.partial`],
    ['an editor backup', `acme/${U}.jsonl.gz~`],
  ])('%s is hidden or temp', (_what, key) => {
    expect(isHiddenOrTemp(key)).toBe(true);
  });

  test.each([
    ['a deposit', `acme/${U}.jsonl.gz`],
    ['a dot inside the name', `acme/a.b-${U}.jsonl.gz`],
    ['a rejected but visible file', 'acme/notes.txt'],
  ])('%s is not', (_what, key) => {
    expect(isHiddenOrTemp(key)).toBe(false);
  });
});
