import type { Logger } from '../../base/index.ts';
import type { MirrorObject } from './listing.ts';

/** Why a listed key is not mirrored: a path no file system takes, a path another key holds, too large for a deposit. */
type SkipCode = 'BAD_PATH' | 'PATH_CLASH' | 'TOO_LARGE';

/**
 * The S3 mirror's keys it does not copy: each said (s3.key_skipped) once and counted by code (/metrics:
 * doi_holdings_s3_keys_skipped_total, and its alert); those skipped for their bytes (a path clash, too large) set
 * aside, so a round does not fetch them again until their bytes change (or a restart).
 */
export class SkippedKeys {
  private readonly said = new Set<string>();
  readonly counts = new Map<SkipCode, number>();
  private readonly aside = new Map<string, { etag: string; size: number }>();

  constructor(
    private readonly log: Logger,
    private readonly where: { env: string; bucket: string },
  ) {}

  /** Says why `key` is skipped, once per key unless `again` (new bytes under it). */
  say(key: string, why: string, code: SkipCode = 'BAD_PATH', again = false): void {
    if (this.said.has(key) && !again) return;
    this.said.add(key);
    this.counts.set(code, (this.counts.get(code) ?? 0) + 1);
    this.log.log('warn', 's3.key_skipped', { env: this.where.env, bucket: this.where.bucket, key, code, why });
  }

  /** Says it, and sets these bytes of it aside. */
  setAside(o: MirrorObject, why: string, code: SkipCode, again = false): void {
    this.say(o.key, why, code, again);
    this.aside.set(o.rel, { etag: o.etag, size: o.size });
  }

  /** Whether these very bytes were set aside already. */
  isAside(o: MirrorObject): boolean {
    const a = this.aside.get(o.rel);
    return a !== undefined && a.etag === o.etag && a.size === o.size;
  }

  /** The key's bytes were put in place after all: nothing of it is set aside. */
  release(rel: string): void {
    this.aside.delete(rel);
  }

  /** Every key said so far. */
  keys(): string[] {
    return [...this.said];
  }
}
