/** A route's handler as Bun's router calls it. */
export type RouteHandler = (request: Request) => Response | Promise<Response>;

type Method = 'GET' | 'POST';

/**
 * The static API routes, each also handed to Bun's router directly (server.ts): Elysia answers every request
 * through a context object and an async step even when the handler is synchronous, which measured at about a
 * sixth of an empty change-feed poll's cost. The Elysia app stays the general path (app.handle, 404s, 405s,
 * the status pages); both reach the same handler, which answers its own throw with the app's 500 (app.ts,
 * `timed`), and test/http/routes/direct-routes.test.ts holds their answers equal.
 */
export class DirectRoutes {
  private readonly routes: Record<string, Partial<Record<Method, RouteHandler>>> = {};

  add(method: Method, path: string, handle: RouteHandler): void {
    (this.routes[path] ??= {})[method] = handle;
  }

  /** path -> method -> handler, the shape of Bun.serve's `routes` */
  table(): Record<string, Partial<Record<Method, RouteHandler>>> {
    return this.routes;
  }
}

const byApp = new WeakMap<object, DirectRoutes>();

/** Ties an app to its direct routes (createApp), for the server that serves it. */
export function setDirectRoutes(app: object, routes: DirectRoutes): void {
  byApp.set(app, routes);
}

export function directRoutesOf(app: object): DirectRoutes | undefined {
  return byApp.get(app);
}
