/** Request-level errors of DESIGN section 6: `{"statusCode": N, "error": "<code>", "message": "<what and why>"}`. */

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'INVALID_JSON'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_CONFIGURED'
  | 'INTERNAL';

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function errorResponse(status: number, error: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ statusCode: status, error, message }), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function jsonResponse(text: string, status = 200): Response {
  return new Response(text, { status, headers: JSON_HEADERS });
}
