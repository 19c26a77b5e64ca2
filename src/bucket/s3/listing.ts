import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { S3BucketSettings } from '../../config/index.ts';
import { mirrorKeyDecision } from './mirror-key.ts';
import { REPORTS_FOLDER } from './report-writer.ts';

/** A listed object the mirror may copy: its bucket key, its path under the mirror folder, and what it was listed as. */
export interface MirrorObject {
  key: string;
  rel: string;
  etag: string;
  size: number;
  /** ms */
  lastModified: number;
}

/**
 * Every object under the bucket's prefix (ListObjectsV2, page by page), folder markers and hidden names left out;
 * a key that cannot be a path in the mirror is told to `skip` (with why) and left out too (mirror-key.ts). `stop`
 * ends it (the mirror closing).
 */
export async function listBucket(
  client: S3Client,
  settings: S3BucketSettings,
  skip: (key: string, why: string) => void,
  stop?: AbortSignal,
): Promise<MirrorObject[]> {
  const out: MirrorObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: settings.bucket,
        Prefix: settings.prefix || undefined,
        ContinuationToken: token,
      }),
      { abortSignal: stop },
    );
    for (const o of page.Contents ?? []) {
      if (!o.Key || o.Key.endsWith('/')) continue;
      const rel = o.Key.slice(settings.prefix.length);
      // the reports this service writes back (report-writer.ts) are not deposits
      if (settings.reports && rel.startsWith(REPORTS_FOLDER)) continue;
      const decision = mirrorKeyDecision(rel);
      if (decision.action === 'ignore') continue;
      if (decision.action === 'skip') {
        skip(o.Key, `${decision.why}; not mirrored`);
        continue;
      }
      out.push({
        key: o.Key,
        rel,
        etag: o.ETag ?? '',
        size: o.Size ?? 0,
        lastModified: o.LastModified?.getTime() ?? 0,
      });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}
