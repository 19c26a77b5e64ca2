import type { App } from './app.ts';

/** Serves the app on a real port; port 0 picks a free one (tests). */
export function startServer(app: App, host: string, port: number): { url: string; port: number; stop(): Promise<void> } {
  const server = Bun.serve({ hostname: host, port, fetch: (request) => app.handle(request) });
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    stop: async () => {
      await server.stop();
    },
  };
}
