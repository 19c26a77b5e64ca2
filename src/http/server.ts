import type { App } from './app.ts';

/**
 * Serves the app on a real port; port 0 picks a free one (tests). Elysia's listen hands its static routes to
 * Bun's native router (the Updates API routes are matched without running JS); other requests reach its fetch.
 */
export function startServer(app: App, host: string, port: number): { url: string; port: number; stop(): Promise<void> } {
  const fetch = app.fetch;
  app.listen({ hostname: host, port, fetch: (request: Request) => fetch(routable(request)) } as Parameters<App['listen']>[0]);
  const server = app.server!;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    stop: async () => {
      await app.stop();
    },
  };
}

/**
 * Elysia looks for the path from the 12th character of the URL on (`http://` plus at least 4), so a request
 * whose Host header is shorter ("Host: api", "Host: a") would be routed by the wrong path (a 404). Such a
 * request is handed on with a placeholder host; no route reads the host.
 */
function routable(request: Request): Request {
  const url = request.url;
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  if (slash >= 11) return request;
  const path = slash === -1 ? '/' : url.slice(slash);
  return new Request(`http://localhost${path}`, { method: request.method, headers: request.headers, body: request.body, signal: request.signal, duplex: 'half' } as RequestInit);
}
