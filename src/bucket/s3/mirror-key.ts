import { isHiddenOrTemp, unsafeKeyPart } from '../../deposit/index.ts';

/** The longest file or folder name Linux file systems take (NAME_MAX), in bytes. */
const NAME_MAX_BYTES = 255;

/**
 * What the S3 mirror does with an object key (the prefix taken off): `copy` it to the same relative path in the
 * mirror folder; `ignore` a hidden or temporary name (never ingested, and `.s3-partial/`, `.superseded/` and the
 * state file are the mirror's own); or `skip` a key that cannot be such a path, with the reason: it would lead
 * outside the folder, or no file system takes it. A skipped key is logged (s3.key_skipped, BAD_PATH) and never
 * fails a round, so it cannot hold back the objects after it.
 */
export function mirrorKeyDecision(rel: string): { action: 'copy' | 'ignore' } | { action: 'skip'; why: string } {
  const why = keyProblem(rel);
  if (why !== undefined) return { action: 'skip', why };
  return { action: isHiddenOrTemp(rel) ? 'ignore' : 'copy' };
}

function keyProblem(rel: string): string | undefined {
  switch (unsafeKeyPart(rel)) {
    case 'control':
      return 'the key contains a control character';
    case 'backslash':
      return 'the key contains a backslash (a folder separator on some systems)';
    case 'dotSegment':
      return 'the key has a "." or ".." segment: it would lead outside the mirror folder';
  }
  const parts = rel.split('/');
  if (parts.some((p) => p === '')) return 'the key has an empty segment (a leading "/" or "//")';
  if (parts.some((p) => Buffer.byteLength(p, 'utf8') > NAME_MAX_BYTES))
    return `a name in the key is over ${NAME_MAX_BYTES} bytes, longer than a file system takes`;
  return undefined;
}
