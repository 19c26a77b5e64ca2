import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:net';

/**
 * A publisher platform's Entitlement API on loopback, for the tests: it records every call (headers, body, the
 * JWT checked with the shared secret by its own HMAC, not the service's code) and answers as its `mode` says.
 */
export type PlatformMode =
  | {
      kind: 'answer';
      entitled: (doi: string) => 'yes' | 'no' | 'maybe';
      delayMs?: number;
      /** answers only once this settles: a test decides when, with no clock */
      until?: Promise<unknown>;
      extra?: (doi: string) => Record<string, unknown>;
    }
  /** any status, body and headers, as given */
  | { kind: 'raw'; status: number; body: string | Uint8Array; headers?: Record<string, string> }
  /** never answers (the socket stays open until the client gives up) */
  | { kind: 'hang' };

export interface RecordedCall {
  headers: Record<string, string>;
  body: { org: Record<string, unknown>; dois: string[] };
  /** the JWT's claims when its HS256 signature verifies with the secret; undefined otherwise */
  claims: Record<string, unknown> | undefined;
  jwtHeader: Record<string, unknown> | undefined;
  /** the client's port: calls over one kept-alive connection share it */
  clientPort: number | undefined;
}

export class PlatformServer {
  readonly calls: RecordedCall[] = [];
  mode: PlatformMode = { kind: 'answer', entitled: () => 'yes' };
  private readonly server: ReturnType<typeof Bun.serve>;
  private readonly hanging = new Set<() => void>();

  constructor(readonly secret: string) {
    this.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 30,
      fetch: (request) => this.handle(request),
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}/entitlements`;
  }

  private async handle(request: Request): Promise<Response> {
    const body = (await request.json()) as RecordedCall['body'];
    const headers = Object.fromEntries(request.headers.entries());
    this.calls.push({
      headers,
      body,
      ...verifyJwt(headers.authorization, this.secret),
      clientPort: this.server.requestIP(request)?.port,
    });
    const mode = this.mode;
    if (mode.kind === 'raw')
      return new Response(mode.body, {
        status: mode.status,
        headers: { 'content-type': 'application/json', ...mode.headers },
      });
    if (mode.kind === 'hang')
      return new Promise<Response>((resolve) => {
        const release = () => resolve(new Response('{"entitlements":[]}'));
        this.hanging.add(release);
        request.signal.addEventListener('abort', () => this.hanging.delete(release));
      });
    if (mode.delayMs) await Bun.sleep(mode.delayMs);
    if (mode.until) await mode.until;
    const entitlements = body.dois.map((doi) => ({ doi, entitled: mode.entitled(doi), ...(mode.extra?.(doi) ?? {}) }));
    return Response.json({ entitlements });
  }

  async stop(): Promise<void> {
    for (const release of this.hanging) release();
    this.hanging.clear();
    await this.server.stop(true);
  }
}

/** The JWT's header and claims when it is `Bearer <HS256 JWT>` signed with `secret`. */
export function verifyJwt(
  authorization: string | undefined,
  secret: string,
): { claims: Record<string, unknown> | undefined; jwtHeader: Record<string, unknown> | undefined } {
  const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  if (!m) return { claims: undefined, jwtHeader: undefined };
  const expected = createHmac('sha256', secret).update(`${m[1]}.${m[2]}`).digest();
  const given = Buffer.from(m[3]!, 'base64url');
  const ok = given.length === expected.length && timingSafeEqual(given, expected);
  const decode = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { claims: ok ? decode(m[2]!) : undefined, jwtHeader: decode(m[1]!) };
}

/** A TCP server that accepts a connection and resets it at once: a platform that breaks connections. */
export async function resettingServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/entitlements`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port nothing listens on (bound, then closed): connections are refused. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/entitlements`;
}
