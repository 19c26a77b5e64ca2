/** OpenAPI parameters that several routes share the shape of. */

/** A query parameter, never required. */
export function queryParameter(name: string, description: string, schema: object): object {
  return { name, in: 'query', required: false, description, schema };
}

/** A paged list's two query parameters: `after` (the cursor the page before gave) and `limit`. */
export function pageParameters(after: string, limit: string, maxLimit: number): object[] {
  return [
    queryParameter('after', after, { type: 'string' }),
    queryParameter('limit', limit, { type: 'integer', minimum: 1, maximum: maxLimit }),
  ];
}
