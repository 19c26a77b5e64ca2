export { acceptsGzip, codedEtag } from './accept-encoding.ts';
export { type BodyLimits, DEFAULT_BODY_TIMEOUT_MS, parseJson, readJsonBytes } from './body.ts';
export { errorBody, errorResponse, JSON_HEADERS, jsonResponse, notConfigured } from './errors.ts';
export { noneMatch } from './etag.ts';
export { pageLimit } from './page-limit.ts';
export { scanEntitlementBody, scanPlainBody } from './plain-body.ts';
export { describeSchemaFault } from './schema-fault.ts';
export { utf8Text } from './utf8.ts';
