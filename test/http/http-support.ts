import { DEFAULT_ENTITLEMENTS, type PlatformSettings } from '../../src/config/index.ts';
import { Entitlements } from '../../src/entitlement/index.ts';
import { type App, createApp, type HttpDeps } from '../../src/http/index.ts';
import type { Store } from '../../src/store/index.ts';
import type { UpdateObject } from '../../src/updates/index.ts';
import { importUpdates, type ParsedUpdates, readUpdates } from '../../src/updates/index.ts';
import { SAMPLE_PATH } from '../support/rw-sample.ts';

/** Helpers shared by the HTTP tests: a real app over real stores, requests built the way an integrator sends them. */

export const BASE = 'http://localhost';
export const KEY = 'key-with-updates-0001';
export const KEY_NO_UPDATES = 'key-without-updates-0002';
export const INTEGRATORS = [
  { name: 'with-updates', apiKey: KEY, updates: true, cache: true, counter: false },
  { name: 'without-updates', apiKey: KEY_NO_UPDATES, updates: false, cache: true, counter: false },
];

/**
 * Imports the real Retraction Watch sample through the real importer into the given stores; returns the works
 * as the reader sees them (read again, in memory), to compare the API's answers with.
 */
export async function importSample(stores: readonly Store[]): Promise<ParsedUpdates> {
  const stream = () => Bun.file(SAMPLE_PATH).stream() as unknown as AsyncIterable<Uint8Array>;
  await importUpdates(stores, 'retraction-watch-csv', stream());
  return readUpdates('retraction-watch-csv', stream());
}

/** Imports Crossref works JSON (any of its accepted shapes) through the real importer, in small chunks. */
export async function importCrossref(stores: readonly Store[], json: unknown): Promise<ParsedUpdates> {
  const bytes = Buffer.from(typeof json === 'string' ? json : JSON.stringify(json));
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += 37) yield bytes.subarray(i, i + 37);
  }
  await importUpdates(stores, 'crossref-json', chunks());
  return readUpdates('crossref-json', chunks());
}

/**
 * Platforms in the config without an Entitlement API (their paid holdings answer publisher_not_supported): the
 * test stores' platforms must be configured, or their holdings answer as absent.
 */
export function platformsWithoutApi(...names: string[]): PlatformSettings[] {
  return names.map((name) => platformSettings(name));
}

/** A platform's settings as the tests use them (1 s time-out, 8 calls, batches of 20, no cache), changed by `over`. */
export function platformSettings(name: string, over: Partial<PlatformSettings> = {}): PlatformSettings {
  return {
    name,
    entitlementTimeoutMs: 1000,
    entitlementConcurrency: 8,
    entitlementBatch: 20,
    entitlementCacheSeconds: 0,
    ...over,
  };
}

/** Entitlements of the test stores' platforms, `acme` and `beta`, neither with an Entitlement API. */
export function entitlementsWithoutApi(): Entitlements {
  return new Entitlements(platformsWithoutApi('acme', 'beta'), DEFAULT_ENTITLEMENTS);
}

export function makeApp(envs: HttpDeps['envs'], over: Partial<HttpDeps> = {}): App {
  return createApp({
    entitlements: entitlementsWithoutApi(),
    integrators: INTEGRATORS,
    maxBodyBytes: 64 * 1024,
    envs,
    health: () => ({ ok: true, checks: {} }),
    version: '9.9.9-test',
    ...over,
  });
}

/** What a request body may be (string, bytes, stream...). */
export type RawBody = RequestInit['body'];

export interface PostOptions {
  key?: string | null;
  contentType?: string | null;
  headers?: Record<string, string>;
  method?: string;
}

/** POST with a raw body (string, bytes or stream); by default with the test key and application/json. */
export function post(app: App, path: string, body: RawBody, opts: PostOptions = {}): Promise<Response> {
  const headers = new Headers(opts.headers ?? {});
  const key = opts.key === undefined ? KEY : opts.key;
  if (key !== null) headers.set('x-api-key', key);
  const type = opts.contentType === undefined ? 'application/json' : opts.contentType;
  if (type !== null) headers.set('content-type', type);
  return app.handle(new Request(`${BASE}${path}`, { method: opts.method ?? 'POST', headers, body }));
}

export function postDois(app: App, path: string, dois: unknown, opts: PostOptions = {}): Promise<Response> {
  return post(app, path, JSON.stringify({ dois }), opts);
}

export interface Doc {
  doi: string;
  statusCode: number;
  updates: UpdateObject[];
  message?: string;
}

/** Reads a 200 updates response, checking its status and content type on the way. */
export async function documents(r: Response): Promise<Doc[]> {
  const text = await r.text();
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${text}`);
  if (r.headers.get('content-type') !== 'application/json; charset=utf-8')
    throw new Error(`content-type ${r.headers.get('content-type')}`);
  const body = JSON.parse(text) as { documents: Doc[] };
  if (Object.keys(body).join() !== 'documents')
    throw new Error(`unexpected top-level keys: ${Object.keys(body).join()}`);
  return body.documents;
}

/** Reads a request-level error response: its status, headers and `{statusCode, error, message}` body. */
export async function errorOf(
  r: Response,
): Promise<{ status: number; contentType: string | null; body: Record<string, unknown> }> {
  return {
    status: r.status,
    contentType: r.headers.get('content-type'),
    body: (await r.json()) as Record<string, unknown>,
  };
}

/** A request body as a stream without a Content-Length (sent chunked over the wire). */
export function streamOf(text: string, chunkBytes = 64): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(new Uint8Array(bytes.subarray(at, at + chunkBytes)));
      at += chunkBytes;
    },
  });
}
