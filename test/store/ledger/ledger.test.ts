import { describe, expect, test } from 'bun:test';
import { fault } from '../../../src/base/fault.ts';
import {
  conflictFault,
  decideFile,
  type FileDecision,
  type FileEntry,
  quarantineEntry,
  seenBefore,
  UNREAD_HASH,
} from '../../../src/store/ledger/index.ts';

/** The one rule for a deposit file (src/store/ledger/ledger.ts): what the ledger holds for its key decides what becomes of it. */

const H = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const base = {
  key: 'acme/00000000-0000-4000-8000-000000000001.jsonl.gz',
  size: 120,
  lastModified: 1_700_000_000_000,
  recordedAt: '',
};
const applied: FileEntry = { ...base, hash: H, outcome: 'applied', seq: 1 };
const quarantined: FileEntry = { ...base, hash: H, outcome: 'quarantined', code: 'NOT_GZIP', message: 'm' };
const unread: FileEntry = { ...base, hash: '', outcome: 'quarantined', code: 'READ_FAILED', message: 'm' };

const decide = (
  existing: FileEntry | undefined,
  hash: string,
  faulty: boolean,
  retry: boolean,
  stat = { size: base.size, lastModified: base.lastModified + 1000 },
): FileDecision => decideFile(existing, { hash, ...stat, faulty }, retry);
const everyWay = [false, true].flatMap((faulty) => [false, true].map((retry) => ({ faulty, retry })));

describe('decideFile', () => {
  test('a key the ledger does not hold is applied, or quarantined when the file has a fault', () => {
    for (const retry of [false, true]) {
      expect(decide(undefined, H, false, retry)).toBe('apply');
      expect(decide(undefined, H, true, retry)).toBe('quarantine');
    }
  });

  test('an applied key seen with the same content is a duplicate, even with --retry', () => {
    for (const { faulty, retry } of everyWay) expect(decide(applied, H, faulty, retry)).toBe('duplicate');
  });

  test('an applied key seen with other content is a conflict, whatever that content and --retry', () => {
    for (const { faulty, retry } of everyWay) {
      expect(decide(applied, OTHER, faulty, retry)).toBe('conflict');
    }
  });

  test('a quarantined key seen with the same content is a duplicate unless the operator retries it', () => {
    expect(decide(quarantined, H, true, false)).toBe('duplicate');
    expect(decide(quarantined, H, false, false)).toBe('duplicate');
    expect(decide(quarantined, H, false, true)).toBe('apply');
    expect(decide(quarantined, H, true, true)).toBe('quarantine');
  });

  test('a file that could not be read matches nothing and conflicts with nothing', () => {
    for (const retry of [false, true]) {
      expect(decide(applied, UNREAD_HASH, true, retry)).toBe('unreadable'); // the applied entry is kept
      expect(decide(undefined, UNREAD_HASH, true, retry)).toBe('quarantine');
      expect(decide(quarantined, UNREAD_HASH, true, retry)).toBe('quarantine'); // written afresh
      expect(decide(unread, UNREAD_HASH, true, retry)).toBe('quarantine'); // another stat: another file
    }
    // the same unread file (same size and LastModified) was decided before, unless the operator retries it
    const same = { size: base.size, lastModified: base.lastModified };
    expect(decide(unread, UNREAD_HASH, true, false, same)).toBe('duplicate');
    expect(decide(unread, UNREAD_HASH, true, true, same)).toBe('quarantine');
  });

  test('a quarantined key seen with other content is attempted again: nothing of the key was applied', () => {
    for (const retry of [false, true]) {
      expect(decide(quarantined, OTHER, false, retry)).toBe('apply');
      expect(decide(quarantined, OTHER, true, retry)).toBe('quarantine');
      expect(decide(unread, H, false, retry)).toBe('apply');
    }
  });
});

describe('seenBefore: the shortcut before a file is read', () => {
  test('answers only where decideFile answers duplicate for the same content', () => {
    const stats = [
      { size: base.size, lastModified: base.lastModified },
      { size: base.size + 1, lastModified: base.lastModified },
      { size: base.size, lastModified: base.lastModified + 1000 },
    ];
    let answered = 0;
    for (const existing of [undefined, applied, quarantined, unread])
      for (const stat of stats)
        for (const { faulty, retry } of everyWay) {
          if (!seenBefore(existing, stat, retry)) continue;
          answered++;
          // same size and LastModified is taken as the same content: the entry's own hash (unknown, for an unread one)
          expect(decide(existing, existing!.hash, faulty, retry, stat)).toBe('duplicate');
        }
    expect(answered).toBe(3 * 2); // each entry, unchanged stat, faulty or not, never with --retry
    // and held the other way: a read file whose stat matches its entry's is decided as a duplicate
    for (const existing of [applied, quarantined, unread])
      expect(decide(existing, existing.hash, true, false, { size: base.size, lastModified: base.lastModified })).toBe(
        'duplicate',
      );
  });

  test('a new size or LastModified, or --retry, always reads the file', () => {
    expect(seenBefore(applied, { size: base.size, lastModified: base.lastModified + 1 }, false)).toBe(false);
    expect(seenBefore(applied, { size: base.size + 1, lastModified: base.lastModified }, false)).toBe(false);
    expect(seenBefore(applied, { size: base.size, lastModified: base.lastModified }, true)).toBe(false);
    expect(seenBefore(undefined, { size: base.size, lastModified: base.lastModified }, false)).toBe(false);
  });
});

describe('what the ledger keeps', () => {
  test('a quarantine entry keeps the identity, the fault as it is, the tries and the time', () => {
    const f = fault('TOO_MANY_RECORDS', `${base.key}: the file has more than 10000 records`);
    expect(quarantineEntry({ ...base, hash: H, platform: 'acme' }, f, 2, '2026-11-23T10:00:00.000Z')).toEqual({
      key: base.key,
      platform: 'acme',
      size: base.size,
      hash: H,
      lastModified: base.lastModified,
      outcome: 'quarantined',
      code: 'TOO_MANY_RECORDS',
      message: f.message,
      tries: 2,
      recordedAt: '2026-11-23T10:00:00.000Z',
    });
  });

  test('a conflict is reported as KEY_REUSED naming the key and both contents', () => {
    const c = conflictFault({ key: base.key, size: 1, hash: OTHER, lastModified: 2, appliedHash: H, recordedAt: '' });
    expect(c.code).toBe('KEY_REUSED');
    expect(c.message).toBe(
      `${base.key} was already applied with other content (sha256 aaaaaaaaaaaa); this content (sha256 bbbbbbbbbbbb) is not applied: file names must be unique`,
    );
  });
});
