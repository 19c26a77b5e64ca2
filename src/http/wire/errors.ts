import type { HttpFaultCode } from '../../base/index.ts';

/** Request-level errors (docs/interface.md, "Updates API"): `{"statusCode": N, "error": "<code>", "message": "<what and why>"}`. */

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function errorResponse(
  status: number,
  error: HttpFaultCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(errorBody(status, error, message), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function errorBody(status: number, error: HttpFaultCode, message: string): string {
  return JSON.stringify({ statusCode: status, error, message });
}

export function jsonResponse(text: string, status = 200): Response {
  return new Response(text, { status, headers: JSON_HEADERS });
}

/** A `/staging/` route on a service without a staging environment. */
export function notConfigured(): Response {
  return errorResponse(404, 'NOT_CONFIGURED', 'this environment is not configured');
}
