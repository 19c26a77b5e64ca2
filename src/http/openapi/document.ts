import { EntitlementsRequest, EntitlementsResponse } from '../../entitlement/index.ts';
import { DocumentHistory } from '../../history/index.ts';
import {
  ByPrefixRequest,
  ByPrefixResponse,
  ChangesResponse,
  ErrorBody,
  PrefixListResponse,
  UpdatesRequest,
  UpdatesResponse,
} from '../routes/index.ts';
import { operationId, syncPaths } from './change-feed-paths.ts';
import { DepositReport, DepositReportPage, depositReportPaths } from './deposit-report-paths.ts';
import { probePaths, probeSchemas } from './probe-paths.ts';
import { STATUS_PAGE_RATE_LIMITED, withIntegratorRateLimit } from './rate-limit-responses.ts';
import { subscriptionPaths, subscriptionSchemas, subscriptionWebhooks } from './subscription-paths.ts';

/**
 * OpenAPI 3.1 description of the integrator API (entitlements, updates), the document status page and the probes,
 * generated from the same TypeBox schemas that validate them. 3.1, not 3.0: its schemas are JSON Schema 2020-12, whose
 * `const` and `{"type": "null"}` TypeBox writes (3.0 knows neither).
 */
export function openApiDocument(version: string): object {
  const strip = (schema: object) => JSON.parse(JSON.stringify(schema));
  const errors = Object.fromEntries(
    [
      ['400', 'Malformed JSON or a body that breaks the schema'],
      ['401', 'Missing or unknown x-api-key'],
      ['408', 'The body did not arrive whole within the body time-out; the connection is closed'],
      ['413', 'Body too large'],
      ['415', 'Body is not application/json, or has a Content-Encoding other than identity'],
    ].map(([code, description]) => [
      code,
      { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    ]),
  );
  // only the /staging/ routes can find their environment missing
  const notConfigured = {
    '404': {
      description: 'NOT_CONFIGURED: the service has no staging environment',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  };
  const operation = (
    operationId: string,
    summary: string,
    request: string,
    response: string,
    description: string,
    staging: boolean,
  ) => ({
    operationId,
    summary,
    security: [{ apiKey: [] }],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${request}` } } },
    },
    responses: {
      '200': { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${response}` } } } },
      ...errors,
      ...(staging ? notConfigured : {}),
    },
  });
  const paths: Record<string, object> = {};
  for (const prefix of ['', '/staging'])
    for (const v of ['v2.1', 'v2.2']) {
      const where = prefix ? ', from the staging environment' : '';
      const vv = v.replace('.', '').toUpperCase(); // V21, V22: a dot is no part of a camelCase name
      paths[`${prefix}/${v}/entitlements`] = {
        post: withIntegratorRateLimit(
          operation(
            operationId(prefix, `checkEntitlements${vv}`),
            `Entitlement checks for 1-100 DOIs, or entries by metadata resolved to one${where}`,
            'EntitlementsRequest',
            'EntitlementsResponse',
            'One Entitlement Object per entry, in request order',
            prefix !== '',
          ),
        ),
      };
      paths[`${prefix}/${v}/updates`] = {
        post: operation(
          operationId(prefix, `findUpdates${vv}`),
          `Update information (retractions, corrections) for 1-100 DOIs${where}`,
          'UpdatesRequest',
          'UpdatesResponse',
          'One document per requested DOI, in request order',
          prefix !== '',
        ),
      };
    }
  for (const prefix of ['', '/staging']) paths[`${prefix}/doi/{doi}`] = { get: statusPage(prefix) };
  for (const prefix of ['', '/staging'])
    Object.assign(paths, syncPaths(prefix, { ...errors, ...(prefix ? notConfigured : {}) }));
  for (const prefix of ['', '/staging']) Object.assign(paths, depositReportPaths(prefix));
  Object.assign(paths, probePaths());
  Object.assign(paths, subscriptionPaths(errors));
  return {
    openapi: '3.1.0',
    // the service is published under no licence (package.json: private): said so, in SPDX's form for a licence of one's own
    info: {
      title: 'doi-holdings integrator API',
      version,
      license: { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' },
    },
    // relative: the API is served where this document is (behind a proxy, at the proxy's address)
    servers: [{ url: '/', description: 'The replica, or the proxy, that serves this document' }],
    paths,
    webhooks: subscriptionWebhooks(),
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: {
        EntitlementsRequest: strip(EntitlementsRequest),
        EntitlementsResponse: strip(EntitlementsResponse),
        UpdatesRequest: strip(UpdatesRequest),
        UpdatesResponse: strip(UpdatesResponse),
        ChangesResponse: strip(ChangesResponse),
        PrefixListResponse: strip(PrefixListResponse),
        ByPrefixRequest: strip(ByPrefixRequest),
        ByPrefixResponse: strip(ByPrefixResponse),
        DocumentHistory: strip(DocumentHistory),
        DepositReport: strip(DepositReport),
        DepositReportPage: strip(DepositReportPage),
        Error: strip(ErrorBody),
        ...Object.fromEntries(Object.entries(probeSchemas).map(([name, schema]) => [name, strip(schema)])),
        ...Object.fromEntries(Object.entries(subscriptionSchemas).map(([name, schema]) => [name, strip(schema)])),
      },
    },
  };
}

/** GET /doi/{doi}: HTML for people, the same history as JSON on request (HEAD answers alike, without a body). */
function statusPage(prefix: string): object {
  const staging = prefix !== '';
  const html = (description: string) => ({
    description,
    content: {
      'text/html': { schema: { type: 'string' } },
      'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    },
  });
  return {
    operationId: operationId(prefix, 'getDocumentStatus'),
    summary: `The document status page: a DOI's holdings changes and update notices as a timeline${staging ? ', from the staging environment' : ''}`,
    description:
      'No key. The DOI is the rest of the path, percent-decoded, matched case-insensitively. HTML by default; JSON with `?format=json` or an Accept header that ranks application/json above text/html.',
    parameters: [
      {
        name: 'doi',
        in: 'path',
        required: true,
        description:
          'The DOI, e.g. 10.1000/xyz123 (percent-encode `?`, `#` and `%`; a DOI with a `.` or `..` segment sends its slashes as %2F)',
        schema: { type: 'string' },
      },
      { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['html', 'json'] } },
    ],
    // public on purpose: the page is for anyone who follows a DOI link (docs/interface.md, "Document status page")
    security: [],
    responses: {
      '200': {
        description: 'The history',
        content: {
          'text/html': { schema: { type: 'string' } },
          'application/json': { schema: { $ref: '#/components/schemas/DocumentHistory' } },
        },
      },
      '304': { description: 'Not modified (If-None-Match matched the ETag)' },
      '400': html('Not a DOI, a malformed percent-encoding, or an unknown format'),
      '404': html(
        staging
          ? 'No history is known for this DOI, or NOT_CONFIGURED: the service has no staging environment'
          : 'No history is known for this DOI',
      ),
      ...STATUS_PAGE_RATE_LIMITED,
    },
  };
}
