import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { type Fault, fault, type S3FaultCode } from '../../base/index.ts';
import type { S3BucketSettings } from '../../config/index.ts';

/** An S3 client for one configured bucket, with timeouts so a slow server cannot hang a sync. */
export function s3ClientFor(settings: S3BucketSettings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    maxAttempts: 2,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 5_000, requestTimeout: 60_000 }),
  });
}

/** Words an operator can act on for the errors S3 servers give. */
export function describeS3Error(e: unknown, settings: S3BucketSettings): Fault<S3FaultCode> {
  const err = e as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    code?: string;
    syscall?: string;
  };
  // the local side (a full disk, permissions): not the bucket's fault, and not fixed there
  if (
    err.$metadata === undefined &&
    err.syscall !== undefined &&
    typeof err.code === 'string' &&
    /^E[A-Z]+$/.test(err.code)
  )
    return fault(
      'S3_MIRROR_WRITE',
      `the mirror folder ${settings.path} cannot be written (${err.code}): ${err.message ?? String(e)}`,
    );
  const where = `S3 bucket "${settings.bucket}"${settings.endpoint ? ` at ${settings.endpoint}` : ''}`;
  const status = err.$metadata?.httpStatusCode;
  const name = err.name ?? err.code ?? 'Error';
  if (
    ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken'].includes(name) ||
    status === 403
  )
    return fault(
      'S3_CREDENTIALS',
      `${where}: access refused (${name}): check the credentials from ${settings.credentialSource}`,
    );
  if (name === 'NoSuchBucket') return fault('S3_NO_SUCH_BUCKET', `${where}: the bucket does not exist`);
  if (status !== undefined && status >= 500)
    return fault('S3_SERVER_ERROR', `${where}: server error ${status} (${name})`);
  return fault('S3_UNREACHABLE', `${where}: ${name}: ${err.message ?? String(e)}`);
}
