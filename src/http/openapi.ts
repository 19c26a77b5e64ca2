import { EntitlementsRequest, EntitlementsResponse } from '../entitlement/index.ts';
import { ErrorBody, UpdatesRequest, UpdatesResponse } from './schemas.ts';

/** OpenAPI 3 description of the integrator API (entitlements, updates), generated from the same TypeBox schemas that validate it. */
export function openApiDocument(version: string): object {
  const strip = (schema: object) => JSON.parse(JSON.stringify(schema));
  const errors = Object.fromEntries(
    [
      ['400', 'Malformed JSON or a body that breaks the schema'],
      ['401', 'Missing or unknown x-api-key'],
      ['413', 'Body too large'],
      ['415', 'Body is not application/json'],
    ].map(([code, description]) => [code, { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]),
  );
  const operation = (summary: string, request: string, response: string, description: string) => ({
    summary,
    security: [{ apiKey: [] }],
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${request}` } } } },
    responses: {
      '200': { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${response}` } } } },
      ...errors,
    },
  });
  const paths: Record<string, object> = {};
  for (const prefix of ['', '/staging'])
    for (const v of ['v2.1', 'v2.2']) {
      const where = prefix ? ', from the staging environment' : '';
      paths[`${prefix}/${v}/entitlements`] = {
        post: operation(`Entitlement checks for 1-100 DOIs${where}`, 'EntitlementsRequest', 'EntitlementsResponse', 'One Entitlement Object per entry, in request order'),
      };
      paths[`${prefix}/${v}/updates`] = {
        post: operation(`Update information (retractions, corrections) for 1-100 DOIs${where}`, 'UpdatesRequest', 'UpdatesResponse', 'One document per requested DOI, in request order'),
      };
    }
  return {
    openapi: '3.0.3',
    info: { title: 'doi-holdings integrator API', version },
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: {
        EntitlementsRequest: strip(EntitlementsRequest),
        EntitlementsResponse: strip(EntitlementsResponse),
        UpdatesRequest: strip(UpdatesRequest),
        UpdatesResponse: strip(UpdatesResponse),
        Error: strip(ErrorBody),
      },
    },
  };
}
