export { createApp, type App, type HttpDeps, type EnvHandles } from './app.ts';
export { startServer } from './server.ts';
export { openApiDocument } from './openapi/index.ts';
export { UpdatesRequest, UpdatesResponse, ErrorBody, MAX_DOIS_PER_REQUEST } from './routes/index.ts';
export { ApiKeys } from './routes/index.ts';
