export { createApp, type App, type HttpDeps, type EnvHandles } from './app.ts';
export { startServer } from './server.ts';
export { openApiDocument } from './openapi.ts';
export { UpdatesRequest, UpdatesResponse, ErrorBody, MAX_DOIS_PER_REQUEST } from './schemas.ts';
export { ApiKeys } from './auth.ts';
