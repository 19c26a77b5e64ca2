import { Type as t } from '@sinclair/typebox';

/**
 * OpenAPI paths and schemas of the probes (app.ts): /livez, /readyz, /healthz. No key: they are for the operator's
 * network and its load balancer (docs/operations.md, "Scaling out").
 */

const Status = (values: string[], description: string) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    { description },
  );

export const probeSchemas = {
  Live: t.Object({ status: Status(['live'], 'always `live`') }, { additionalProperties: false }),
  Readiness: t.Object(
    {
      status: Status(['ready', 'not ready'], '`ready` with 200, `not ready` with 503'),
      failed: t.Optional(t.Array(t.String(), { description: 'what is not ready, e.g. `daemon: shutting down`' })),
    },
    { additionalProperties: false },
  ),
  Health: t.Object(
    {
      status: Status(['ok', 'warning', 'unhealthy'], '`ok` or `warning` with 200, `unhealthy` with 503'),
      version: t.String({ description: "the program's version" }),
      failed: t.Optional(t.Array(t.String(), { description: 'each failed check, in words' })),
      warnings: t.Optional(t.Array(t.String(), { description: 'what is amiss but leaves the answers right' })),
    },
    {
      additionalProperties: true,
      description:
        'Besides these, one member per environment (`production`, `staging`) with its ingest figures, and `updateSources` with each followed source',
    },
  ),
};

/** A probe's GET: its 200 and its 503 (a probe that can fail) describe the same body. */
interface Probe {
  operationId: string;
  summary: string;
  description: string;
  /** the schema of both replies */
  schema: keyof typeof probeSchemas;
  /** what a 200 means */
  ok: string;
  /** what a 503 means; absent: the probe never answers it */
  unavailable?: string;
}

export function probePaths(): Record<string, object> {
  const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
  const probe = ({ operationId, summary, description, schema, ok, unavailable }: Probe) => ({
    get: {
      operationId,
      summary,
      description,
      security: [],
      responses: {
        '200': { description: ok, content: json(schema) },
        // a probe's one 4xx: Bun's HTTP parser refuses headers over 16 KiB before any route (docs/reliability.md)
        '431': { description: 'Request headers over 16 KiB; the connection is closed' },
        ...(unavailable === undefined ? {} : { '503': { description: unavailable, content: json(schema) } }),
      },
    },
  });
  return {
    '/livez': probe({
      operationId: 'getLiveness',
      summary: 'Liveness: the process answers',
      description: 'No key. Nothing else is checked: restart the process only when this does not answer.',
      schema: 'Live',
      ok: 'The process answers',
    }),
    '/readyz': probe({
      operationId: 'getReadiness',
      summary: 'Readiness: whether to send requests to this replica',
      description:
        'No key. Ready while the answers are right: every store open and no stop begun. A warming entitlement index and ingestion that is behind or stuck are ready (the answers are right for what the replica holds). On SIGTERM it answers 503 at once, for a drain before the port closes.',
      schema: 'Readiness',
      ok: 'Ready',
      unavailable: 'Not ready: `failed` names why',
    }),
    '/healthz': probe({
      operationId: 'getHealth',
      summary: 'Health: ingest figures, update sources, and whether anything needs an operator',
      description:
        'No key. 503 while shutting down, when ingestion is stuck (files waiting, none finished for 10 minutes) or a store is full; `warning` (still 200) when an update source is stale.',
      schema: 'Health',
      ok: 'Healthy, maybe with warnings',
      unavailable: 'Unhealthy: `failed` names each failed check',
    }),
  };
}
