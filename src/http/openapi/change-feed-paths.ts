import { pageParameters } from './parameters.ts';

/** OpenAPI paths of the change feed and the private lookup (changes-route.ts), for openapi.ts. */
export function syncPaths(prefix: string, errors: Record<string, object>): Record<string, object> {
  const where = prefix ? ', from the staging environment' : '';
  const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
  const { '400': bad, '401': unauthorized, '404': notConfigured } = errors as Record<string, object | undefined>;
  // `errors` carries a 404 (NOT_CONFIGURED) for the /staging/ routes only
  const missing = notConfigured ? { '404': notConfigured } : {};
  return {
    [`${prefix}/v2.2/updates/changes`]: {
      get: {
        operationId: operationId(prefix, 'getUpdateChanges'),
        summary: `The change feed: works whose updates changed since a cursor, each with its complete current list${where}`,
        description:
          'Without `after`, the feed starts from the beginning (a full sync). Each item is state, not a diff: applying it twice is harmless, ' +
          'and a work whose last update was withdrawn comes with `updates: []`. Keep `next` and ask again; while `more` is true, at once. ' +
          'Cursors are opaque and valid on every replica: a cursor from a replica that is ahead gets an empty page and itself back until this one catches up. ' +
          'A cursor older than the feed keeps withdrawals (`updates.changeFeedKeepDays`), or from another history of the feed, answers 410: sync again from the start.',
        security: [{ apiKey: [] }],
        parameters: [...pageParameters('the `next` of an earlier reply', 'works per page (default 1000)', 1000)],
        responses: {
          '200': { description: 'A page of changes', content: json('ChangesResponse') },
          '400': { description: 'A malformed cursor or limit, or an unknown parameter', content: json('Error') },
          '401': unauthorized,
          '410': {
            description: 'The cursor can no longer be continued: sync again from the start (no `after`)',
            content: json('Error'),
          },
          ...missing,
        },
      },
    },
    [`${prefix}/v2.2/updates/prefixes`]: {
      get: {
        operationId: operationId(prefix, 'getUpdatePrefixes'),
        summary: `Hash prefixes of every work with updates, for a lookup that never sends a DOI${where}`,
        description:
          'Prefixes of the SHA-256 (hex) of the DOI key (the DOI lower-cased, ASCII letters only). Check a DOI locally: when its prefix is listed, ' +
          'POST the prefix to by-prefix and match the full hash. Send If-None-Match with the ETag you hold; gzip when Accept-Encoding allows it (gzip;q=0 refuses it), each coding with its own ETag.',
        security: [{ apiKey: [] }],
        responses: {
          '200': { description: 'The prefix list', content: json('PrefixListResponse') },
          '304': { description: 'Not modified (If-None-Match matched the ETag)' },
          '401': unauthorized,
          ...missing,
        },
      },
    },
    [`${prefix}/v2.2/updates/by-prefix`]: {
      post: {
        operationId: operationId(prefix, 'findUpdatesByPrefix'),
        summary: `Every work with updates under the given hash prefixes, with its full hash${where}`,
        security: [{ apiKey: [] }],
        requestBody: { required: true, content: json('ByPrefixRequest') },
        responses: {
          '200': { description: 'The works, in hash order', content: json('ByPrefixResponse') },
          ...errors,
          '400': bad,
        },
      },
    },
  };
}

/**
 * An operation's operationId: stable (clients generated from the document name their methods after it), camelCase,
 * `staging` before the production operation's name for its /staging/ twin.
 */
export function operationId(prefix: string, name: string): string {
  return prefix ? `staging${name[0]!.toUpperCase()}${name.slice(1)}` : name;
}
