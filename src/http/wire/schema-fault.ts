import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';

/**
 * The first schema fault of a request body, with its path, in words an integrator can act on (docs/design.md,
 * "HTTP"). `shape` shows the body's form; `entry` says what one `dois` entry may be.
 */
export function describeSchemaFault(check: TypeCheck<TSchema>, value: unknown, shape: string, entry: string): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `the body must be a JSON object ${shape}`;
  const first = check.Errors(value).First();
  if (!first) return 'the body does not match the request schema';
  const e = insideUnion(first);
  const at = bounded(e.path || '/');
  const inEntry = /^\/dois\/\d+\//.test(at);
  if (e.type === ValueErrorType.ObjectRequiredProperty) return `${at}: required: the body must be ${shape}`;
  if (e.type === ValueErrorType.ObjectAdditionalProperties)
    return `${at}: unexpected property; ${inEntry ? entry : `the body must be ${shape}`}`;
  const dois = (value as { dois?: unknown }).dois;
  if (at === '/dois' && Array.isArray(dois)) return `/dois: ${dois.length} DOIs given; send 1 to 100 per request`;
  if (/^\/dois\/\d+$/.test(at) || (inEntry && e.type === ValueErrorType.Union)) return `${at}: ${entry}`;
  return `${at}: ${inWords(e)}`;
}

/**
 * A union's fault inside the alternative the value has the type of (`{"doi": 5}` is an object entry whose `doi`
 * is wrong, not "not a string or an object"): the first alternative whose first fault lies below the union's
 * path. When every alternative fails at the value itself, the union's own fault.
 */
function insideUnion(e: ValueError): ValueError {
  if (e.type !== ValueErrorType.Union) return e;
  for (const alternative of e.errors) {
    const first = alternative.First();
    if (first?.path.startsWith(`${e.path}/`)) return insideUnion(first);
  }
  return e;
}

/** A fault in words; TypeBox's own message where none is written here. */
function inWords(e: ValueError): string {
  const schema = e.schema as { maxLength?: number; minLength?: number };
  switch (e.type) {
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.StringMaxLength:
      return `at most ${schema.maxLength} characters`;
    case ValueErrorType.StringMinLength:
      return `at least ${schema.minLength} character${schema.minLength === 1 ? '' : 's'}`;
    default:
      return e.message;
  }
}

/** A path as echoed in a message: a property name can be as long as the body, so a long one is cut. */
function bounded(path: string): string {
  return path.length <= 120 ? path : `${path.slice(0, 100)}...(${path.length} characters)`;
}
