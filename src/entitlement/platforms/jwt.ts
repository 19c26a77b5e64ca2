import { createHmac } from 'node:crypto';

/**
 * A compact JWS, HS256 (RFC 7519, RFC 7515): what a platform's Entitlement API checks with the secret it shares
 * with us, as GetFTR's publisher integration signs its calls.
 */
export function signJwtHs256(claims: Record<string, unknown>, secret: string): string {
  const head = HEADER;
  const body = base64url(Buffer.from(JSON.stringify(claims)));
  const signature = base64url(createHmac('sha256', secret).update(`${head}.${body}`).digest());
  return `${head}.${body}.${signature}`;
}

function base64url(b: Buffer): string {
  return b.toString('base64url');
}

const HEADER = base64url(Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })));
