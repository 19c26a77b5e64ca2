import { type Static, Type as t } from '@sinclair/typebox';
import { operationId } from './change-feed-paths.ts';
import { pageParameters, queryParameter } from './parameters.ts';

/**
 * The deposit reports' replies (deposit-reports-route.ts; docs/interface.md, "Deposit reports") and their OpenAPI
 * paths. The route's tests check its replies against these schemas.
 */

const RejectedLine = t.Object(
  {
    line: t.Integer({ minimum: 1, description: 'the line number in the decompressed file' }),
    path: t.String({ description: 'JSON pointer of the failing field; empty for the whole line' }),
    code: t.String({ description: 'a stable fault code (INVALID_JSON, SCHEMA, INVALID_DOI, ...)' }),
    message: t.String(),
  },
  { additionalProperties: false },
);

const Counts = t.Object(
  {
    records: t.Integer(),
    added: t.Integer(),
    updated: t.Integer(),
    removed: t.Integer(),
    unchanged: t.Integer(),
    noopRemovals: t.Integer(),
    superseded: t.Integer(),
    overtaken: t.Optional(t.Integer()),
    rejected: t.Integer({ description: 'every rejected line, listed or not' }),
  },
  { additionalProperties: false },
);

export const DepositReport = t.Object(
  {
    env: t.Union([t.Literal('production'), t.Literal('staging')]),
    key: t.String({ description: 'the bucket key: <platform>/<name>.jsonl.gz' }),
    platform: t.Optional(t.String()),
    size: t.Integer({ description: 'bytes, as read from the bucket' }),
    hash: t.String({ description: 'sha256 of the bytes read, hex; empty when the file could not be read' }),
    outcome: t.Union([t.Literal('applied'), t.Literal('quarantined')]),
    seq: t.Optional(t.Integer({ description: 'its place in the apply order (applied files)' })),
    code: t.Optional(t.String({ description: 'a quarantined file: why, as a stable code' })),
    message: t.Optional(t.String()),
    counts: t.Optional(Counts),
    rejectedLines: t.Array(RejectedLine, { maxItems: 1000, description: 'the first 1,000 rejected lines' }),
    rejectedNotListed: t.Optional(t.Integer({ description: 'rejected lines counted but not listed' })),
    timings: t.Optional(t.Object({ readMs: t.Number(), parseMs: t.Number(), applyMs: t.Number() })),
    tries: t.Optional(t.Integer()),
    recordedAt: t.String({ format: 'date-time', description: 'when this service applied or quarantined it' }),
    lastModified: t.String({ format: 'date-time', description: "the bucket's LastModified: when it was received" }),
    conflicts: t.Optional(
      t.Array(
        t.Object({
          code: t.Literal('KEY_REUSED'),
          message: t.String(),
          lastModified: t.String({ format: 'date-time' }),
          recordedAt: t.String({ format: 'date-time' }),
        }),
        { description: 'the same name deposited again with other content: never applied' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type DepositReport = Static<typeof DepositReport>;

export const DepositReportPage = t.Object(
  {
    platform: t.String(),
    env: t.Union([t.Literal('production'), t.Literal('staging')]),
    deposits: t.Array(DepositReport, { description: 'newest first (LastModified, then key)' }),
    next: t.Optional(t.String({ description: 'pass as `after` for the next page; absent on the last' })),
  },
  { additionalProperties: false },
);

export function depositReportPaths(prefix: string): Record<string, object> {
  const where = prefix ? ', from the staging environment' : '';
  const ref = (schema: string) => ({ schema: { $ref: `#/components/schemas/${schema}` } });
  const error = (description: string) => ({ description, content: { 'application/json': ref('Error') } });
  const common = {
    '401': error('Missing or unknown key (a request asking for HTML is also answered WWW-Authenticate: Basic)'),
    '404': error(
      `The platform is not this key's (another platform's name answers as an unknown one), or the file is not in the ledger${prefix ? '; or NOT_CONFIGURED: no staging environment' : ''}`,
    ),
  };
  const name = {
    name: 'name',
    in: 'path',
    required: true,
    description: "the platform's name; its key reads only its own",
    schema: { type: 'string' },
  };
  const format = queryParameter('format', 'html for people; JSON by default (or as the Accept header ranks them)', {
    type: 'string',
    enum: ['json', 'html'],
  });
  const description =
    "Our addition to the interface: a platform's own deposit reports, read with the key of its `reportKeyEnv`, as x-api-key (or a browser's Basic password).";
  return {
    [`${prefix}/v2.2/platforms/{name}/deposits`]: {
      get: {
        operationId: operationId(prefix, 'listDepositReports'),
        summary: `A platform's deposited files, newest first, with their reports${where}`,
        description,
        security: [{ apiKey: [] }],
        parameters: [
          name,
          ...pageParameters('the `next` of the page before', 'files per page (default 20)', 100),
          format,
        ],
        responses: {
          '200': {
            description: 'A page of reports',
            content: { 'application/json': ref('DepositReportPage'), 'text/html': { schema: { type: 'string' } } },
          },
          '400': error('A cursor that is not a file of this platform, a bad limit or format, an unknown parameter'),
          ...common,
        },
      },
    },
    [`${prefix}/v2.2/platforms/{name}/deposits/{file}`]: {
      get: {
        operationId: operationId(prefix, 'getDepositReport'),
        summary: `One deposited file's report${where}`,
        description,
        security: [{ apiKey: [] }],
        parameters: [
          name,
          {
            name: 'file',
            in: 'path',
            required: true,
            description: "the file's name within the platform's folder (<name>.jsonl.gz)",
            schema: { type: 'string' },
          },
          format,
        ],
        responses: {
          '200': {
            description: "The file's report",
            content: { 'application/json': ref('DepositReport'), 'text/html': { schema: { type: 'string' } } },
          },
          '400': error('A bad format, or a malformed percent-encoding'),
          ...common,
        },
      },
    },
  };
}
