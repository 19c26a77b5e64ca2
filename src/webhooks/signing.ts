import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256, keyed by the secret's
 * bytes after `whsec_`, over `${webhook-id}.${webhook-timestamp}.${body}`. The tests verify every delivery with the
 * `standardwebhooks` package, an implementation that is not ours.
 */

const PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes (the HMAC's block-size half; Standard Webhooks asks 24 to 64). */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

export function signature(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers; several secrets (one rotated out, still valid) give one signature each, space-separated. */
export function signedHeaders(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, msgId, timestampSeconds, body)).join(' '),
  };
}
