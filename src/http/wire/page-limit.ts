import { errorResponse } from './errors.ts';

/**
 * A paged route's `limit` query parameter: absent (undefined), the route's default; else a whole number from 1 to
 * `max`, or the 400 that says so. Four digits at most are read as a number: every route's `max` is below 10,000.
 */
export function pageLimit(text: string | undefined, byDefault: number, max: number): number | Response {
  const limit = text === undefined ? byDefault : /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (limit >= 1 && limit <= max) return limit;
  return errorResponse(
    400,
    'BAD_REQUEST',
    `limit must be a whole number from 1 to ${max} (got ${JSON.stringify(text)})`,
  );
}
