import type { AnyElysia } from 'elysia';
import { notePeer } from './limits/index.ts';
import { directRoutesOf } from './routes/index.ts';
import { DEFAULT_BODY_TIMEOUT_MS } from './wire/index.ts';

/**
 * Serves the app on a real port; port 0 picks a free one (tests). Bun's native router matches the static routes
 * without running JS and calls the API routes' handlers directly (direct-routes.ts); other requests reach Elysia.
 * The server's idle time-out (which drops a connection without a word) stays above the body time-out, so a
 * stalled body is answered 408 first (src/http/wire/body.ts).
 */
export function startServer(
  app: AnyElysia,
  host: string,
  port: number,
  bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
): { url: string; port: number; stop(): Promise<void> } {
  // Elysia's listen hands Bun its own compiled `app.fetch` (a `fetch` option is overridden), and Bun's router
  // takes only static paths from it; the wildcard routes (status pages) are routed by Bun to a fetch that fixes
  // the URL first. (`app.fetch` is read per request: listen compiles it again.)
  // the socket's peer is noted for the limits per client address (limits/client-address.ts): Elysia's handlers
  // see the request alone
  const viaElysia = (request: Request, server: Bun.Server<unknown>) => {
    const routed = routable(request);
    notePeer(routed, server.requestIP(request)?.address);
    return app.fetch(routed);
  };
  const wildcards = Object.fromEntries(app.routes.filter((r) => r.path.endsWith('*')).map((r) => [r.path, viaElysia]));
  // the static API routes straight to their handlers (direct-routes.ts); another method falls through to Elysia (405)
  const direct = directRoutesOf(app)?.table() ?? {};
  app.config.serve = {
    ...app.config.serve,
    routes: { ...(app.config.serve?.routes as object | undefined), ...wildcards, ...direct },
  };
  const idleTimeout = Math.min(255, Math.max(30, Math.ceil(bodyTimeoutMs / 1000) + 5));
  // reusePort off (Elysia turns it on): with it, a second daemon on the same address starts without a word and
  // the kernel splits the connections between the two, each answering from its own config and store
  app.listen({ hostname: host, port, idleTimeout, reusePort: false } as Parameters<AnyElysia['listen']>[0]);
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
  return new Request(`http://localhost${path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    duplex: 'half',
  } as RequestInit);
}
