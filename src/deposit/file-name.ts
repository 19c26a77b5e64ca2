import { type Fault, fault, type PathFaultCode } from '../base/index.ts';

/** Bucket path rules (docs/interface.md, "Depositing holdings"): `<platform>/<name>.jsonl.gz`, the name containing an RFC 4122 UUID. */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface DepositPath {
  platform: string;
  name: string;
  /** `<platform>/<name>`: the file's key in the bucket and the ledger */
  key: string;
}

/**
 * What makes a key unsafe as a path, whatever else it is: control characters, a backslash (a folder separator on
 * some systems, where "a\..\b" leads elsewhere), or a "." or ".." segment. The one rule for deposit paths (BAD_PATH)
 * and for the keys the S3 mirror copies (mirror-key.ts); each says it in its own words.
 */
export function unsafeKeyPart(key: string): 'control' | 'backslash' | 'dotSegment' | undefined {
  if (CONTROL.test(key)) return 'control';
  if (key.includes('\\')) return 'backslash';
  if (key.split('/').some((p) => p === '..' || p === '.')) return 'dotSegment';
  return undefined;
}

/** BAD_PATH for a key (or a name) unsafe as a path (unsafeKeyPart), saying why. */
export function unsafeKeyFault(key: string): Fault<'BAD_PATH'> | undefined {
  switch (unsafeKeyPart(key)) {
    case 'control':
      return fault('BAD_PATH', `${JSON.stringify(key)}: the path contains control characters`);
    case 'backslash':
      return fault('BAD_PATH', `${key}: the path contains a backslash`);
    case 'dotSegment':
      return fault('BAD_PATH', `${key}: the path contains "." or ".." segments`);
  }
  return undefined;
}

/** Checks a bucket-relative key; `platforms` are the registered platform names. */
export function parseDepositPath(key: string, platforms: ReadonlySet<string>): DepositPath | Fault<PathFaultCode> {
  const unsafe = unsafeKeyFault(key);
  if (unsafe) return unsafe;
  const parts = key.split('/');
  if (parts.length === 1)
    return fault(
      'NOT_IN_PLATFORM_FOLDER',
      `${key}: files must be inside a platform folder (<platform>/<name>.jsonl.gz)`,
    );
  if (parts.length > 2 || parts.some((p) => p === ''))
    return fault(
      'NESTED_PATH',
      `${key}: files must sit directly in a platform folder (<platform>/<name>.jsonl.gz), not deeper`,
    );
  const [platform, name] = parts as [string, string];
  if (!platforms.has(platform))
    return fault('UNKNOWN_PLATFORM', `${key}: platform "${platform}" is not registered in the config`);
  const nameFault = fileNameProblem(name);
  if (nameFault) return fault(nameFault.code, `${key}: ${nameFault.message}`);
  return { platform, name, key };
}

/** The rules on the file name alone (docs/interface.md, "Depositing holdings"): a UUID, and the .jsonl.gz extension. */
export function fileNameProblem(name: string): Fault<'BAD_EXTENSION' | 'NAME_WITHOUT_UUID'> | undefined {
  if (!name.endsWith('.jsonl.gz')) return fault('BAD_EXTENSION', 'the file name must end in .jsonl.gz');
  if (!UUID.test(name))
    return fault('NAME_WITHOUT_UUID', 'the file name must contain a UUID (RFC 4122) so that it is unique');
  return undefined;
}

/**
 * S3's own bound on a key, in UTF-8 bytes. A key is also the ledger's key, which LMDB takes up to 1,978 bytes
 * (with a conflict's suffix after it): a longer one could not even be recorded as refused.
 */
const MAX_KEY_BYTES = 1024;

/** A key too long to record (only a local bucket's deep nesting makes one): refused before the store sees it. */
export function keyLengthProblem(key: string): Fault<'BAD_PATH'> | undefined {
  // a UTF-16 unit is at most 3 UTF-8 bytes: most keys are decided without counting
  if (key.length <= MAX_KEY_BYTES / 3) return undefined;
  const bytes = Buffer.byteLength(key);
  if (bytes <= MAX_KEY_BYTES) return undefined;
  return fault(
    'BAD_PATH',
    `${key}: the path is ${bytes} bytes long, over the ${MAX_KEY_BYTES} a key may have; it is not read or recorded`,
  );
}

/**
 * A name that is not UTF-8 is listed with U+FFFD in place of its bad bytes: a name no file has, so that the file
 * cannot be opened by it. BAD_PATH for such a key, told by the file system that it is not there (ENOENT).
 */
export function undecodableNameFault(key: string, e: unknown): Fault<'BAD_PATH'> | undefined {
  if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !key.includes('\uFFFD')) return undefined;
  return fault(
    'BAD_PATH',
    `${JSON.stringify(key)}: the path is not valid UTF-8 (shown with U+FFFD for its bad bytes), so it cannot be opened by name; rename it`,
  );
}

/** A key is a deposit candidate at all (used to ignore our own temp files and dotfiles in a mirror). */
export function isHiddenOrTemp(key: string): boolean {
  return key.split('/').some((p) => p.startsWith('.')) || key.endsWith('.partial') || key.endsWith('~');
}
