import type { TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { TSchema } from '@sinclair/typebox';

/**
 * The first schema fault of a request body, with its path, in words an integrator can act on (docs/design.md,
 * "HTTP"). `shape` shows the body's form; `entry` says what one `dois` entry may be.
 */
export function describeSchemaFault(check: TypeCheck<TSchema>, value: unknown, shape: string, entry: string): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the body must be a JSON object ${shape}`;
  const e = check.Errors(value).First();
  if (!e) return 'the body does not match the request schema';
  const at = e.path || '/';
  if (e.type === ValueErrorType.ObjectRequiredProperty) return `${at}: required: the body must be ${shape}`;
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return `${at}: unexpected property; the body must be ${shape}`;
  const dois = (value as { dois?: unknown }).dois;
  if (at === '/dois' && Array.isArray(dois)) return `/dois: ${dois.length} DOIs given; send 1 to 100 per request`;
  if (/^\/dois\/\d+$/.test(at) || (/^\/dois\/\d+\//.test(at) && e.type === ValueErrorType.Union)) return `${at}: ${entry}`;
  return `${at}: ${e.message}`;
}
