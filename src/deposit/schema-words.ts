import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';

/**
 * A deposit line's schema fault in words a publisher can act on. The field's path is reported beside the message
 * (RejectedLine.path), so the message does not repeat it; a pattern is described by its schema's `expected`, never
 * shown as a regular expression.
 */
export function describeSchemaError(err: ValueError, record: object): string {
  const s = err.schema as Record<string, unknown>;
  const got = ` (got ${quote(err.value)})`;
  switch (err.type) {
    case ValueErrorType.ObjectAdditionalProperties: {
      const name = lastSegment(err.path);
      const known = Object.keys((s.properties as object | undefined) ?? {});
      const present = Object.keys(parentOf(err.path, record) ?? {});
      const near = closestName(
        name,
        known.filter((k) => !present.includes(k)),
      );
      return near
        ? `property ${quote(name)} is not allowed; did you mean ${quote(near)}?`
        : `property ${quote(name)} is not allowed (allowed: ${known.join(', ')})`;
    }
    case ValueErrorType.ObjectRequiredProperty: {
      const name = lastSegment(err.path);
      // {"DOI": ...} is first of all a record without its doi: name the near miss that is there
      const present = Object.keys(parentOf(err.path, record) ?? {});
      const near = present.find((p) => closestName(p, [name]) !== undefined);
      return near === undefined
        ? `${name} is required`
        : `${name} is required; property ${quote(near)} is not allowed: did you mean ${quote(name)}?`;
    }
    case ValueErrorType.Union: {
      const values = ((s.anyOf as { const?: unknown }[] | undefined) ?? []).map((a) => a.const);
      return values.length > 0 && values.every((v) => typeof v === 'string')
        ? `must be one of ${values.join(', ')}${got}`
        : `is not of an allowed kind${got}`;
    }
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return `must be ${typeof s.expected === 'string' ? s.expected : 'in the documented form'}${got}`;
    case ValueErrorType.String:
      return `must be a string${got}`;
    case ValueErrorType.Boolean:
      return `must be true or false${got}`;
    case ValueErrorType.Object:
      return `must be an object${got}`;
    case ValueErrorType.Array:
      return `must be an array${got}`;
    case ValueErrorType.ArrayMinItems:
      return s.minItems === 1 ? `must have at least one item${got}` : `must have at least ${s.minItems} items${got}`;
    default:
      // a keyword this schema does not use today: TypeBox's own words, rather than none
      return `${err.message}${got}`;
  }
}

/** The known name a near miss was meant to be: the same but for letter case, or a typo or two away. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    // a short name is only a near miss one edit away: "id" is not "doi" mistyped
    if (d <= Math.min(2, Math.ceil(k.length / 2) - 1) && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Edits (insert, delete, substitute, swap two neighbours) from a to b: optimal string alignment. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Infinity;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** A value as JSON, cut to 80 characters: a publisher's text is never printed raw (it may hold line breaks). */
function quote(value: unknown): string {
  return String(JSON.stringify(value)).slice(0, 80);
}

/** JSON pointer segments, unescaped (~1 is /, ~0 is ~) */
function segments(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function lastSegment(path: string): string {
  return segments(path).pop() ?? '';
}

function parentOf(path: string, record: object): object | undefined {
  const parent = segments(path)
    .slice(0, -1)
    .reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], record);
  return typeof parent === 'object' && parent !== null ? parent : undefined;
}
