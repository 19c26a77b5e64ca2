export { type App, createApp, type EnvHandles, type HttpDeps } from './app.ts';
export { createConsoleApp } from './console-app.ts';
export { counter, gauge, processRegistry } from './metrics/index.ts';
export { openApiDocument } from './openapi/index.ts';
export {
  ApiKeys,
  ErrorBody,
  ReportKeys,
  UpdatesRequest,
  UpdatesResponse,
} from './routes/index.ts';
export { startServer } from './server.ts';
