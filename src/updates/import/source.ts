import { type Fault, FaultError, fault } from '../../base/index.ts';
import type { ReplaceReport, Store } from '../../store/index.ts';
import type { UpdateFormat } from '../../update-record/index.ts';
import { type ImportResult, importUpdates } from './import-into-stores.ts';
import { MAX_FIRST_SKIPPED } from './import-report.ts';

/** Where update information comes from: a file path or an http(s) URL. */
export interface SourceResult {
  source: string;
  format: UpdateFormat;
  parsed: ImportResult['parsed'];
  applied: Record<string, ReplaceReport>;
  /** validators of an HTTP source, for the next conditional GET */
  state?: ConditionalState;
}

/**
 * One import's figures, under the same names in the daemon's `updates.imported` line and the `--import-updates`
 * report (docs/operations.md, "Logs"): `firstSkipped` the first skipped rows (`shown` of them at most), `ms` the
 * time it took.
 */
export function importFigures(result: SourceResult, ms: number, shown = MAX_FIRST_SKIPPED) {
  const { report, works } = result.parsed;
  return {
    source: result.source,
    format: result.format,
    rows: report.rows,
    used: report.used,
    works,
    skipped: report.skipped,
    firstSkipped: report.firstSkipped.slice(0, shown),
    applied: result.applied,
    ms: Math.round(ms),
  };
}

export interface ConditionalState {
  etag?: string;
  lastModified?: string;
}

/** Opens a path or URL as a byte stream (gunzipped when it ends in .gz). `notModified` for a 304 answer. */
export async function openSource(
  source: string,
  conditional: ConditionalState = {},
  fetchImpl: typeof fetch = fetch,
  stop?: AbortSignal,
): Promise<
  { chunks: AsyncIterable<Uint8Array>; name: string; state?: ConditionalState } | { notModified: true } | Fault
> {
  if (/^https?:\/\//i.test(source)) {
    const headers: Record<string, string> = {};
    if (conditional.etag) headers['if-none-match'] = conditional.etag;
    if (conditional.lastModified) headers['if-modified-since'] = conditional.lastModified;
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(10 * 60_000);
      res = await fetchImpl(source, { headers, signal: stop ? AbortSignal.any([timeout, stop]) : timeout });
    } catch (e) {
      return fault('SOURCE_UNREACHABLE', `${source}: ${(e as Error).message}`);
    }
    if (res.status === 304) return { notModified: true };
    if (!res.ok || !res.body) return fault('SOURCE_HTTP_ERROR', `${source}: HTTP ${res.status} ${res.statusText}`);
    const state = {
      etag: res.headers.get('etag') ?? undefined,
      lastModified: res.headers.get('last-modified') ?? undefined,
    };
    return { chunks: maybeGunzip(source, res.body), name: new URL(source).pathname, state };
  }
  const file = Bun.file(source);
  if (!(await file.exists())) return fault('SOURCE_NOT_FOUND', `${source}: no such file`);
  return { chunks: maybeGunzip(source, file.stream()), name: source };
}

function maybeGunzip(name: string, body: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const stream = /\.gz($|[?#])/i.test(name)
    ? body.pipeThrough(new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>)
    : body;
  return stream as unknown as AsyncIterable<Uint8Array>;
}

/** Reads and applies one source; the format from the option, the name, or the first bytes. `signal` stops it before its commit. */
export async function importSource(
  stores: readonly Store[],
  source: string,
  opts: {
    format?: UpdateFormat;
    conditional?: ConditionalState;
    onProgress?: (rows: number, bytes: number) => void;
    allowShrink?: boolean;
    signal?: AbortSignal;
  } = {},
): Promise<SourceResult | { notModified: true } | Fault> {
  const opened = await openSource(source, opts.conditional, fetch, opts.signal);
  if ('code' in opened || 'notModified' in opened) return opened;
  const { chunks, first } = await peek(opened.chunks);
  const format = opts.format ?? detectFormat(opened.name, first);
  try {
    const result = await importUpdates(stores, format, chunks, opts.onProgress, {
      allowShrink: opts.allowShrink,
      signal: opts.signal,
    });
    if ('code' in result) return { ...result, message: `${source}: ${result.message}` };
    const { parsed, applied } = result;
    return { source, format, parsed, applied, ...(opened.state ? { state: opened.state } : {}) };
  } catch (e) {
    if (e instanceof FaultError) return { ...e.fault, message: `${source}: ${e.fault.message}` };
    return fault('SOURCE_READ_FAILED', `${source}: ${(e as Error).message}`);
  }
}

/** The first chunk, for format detection, without losing it. */
async function peek(
  chunks: AsyncIterable<Uint8Array>,
): Promise<{ chunks: AsyncIterable<Uint8Array>; first?: Uint8Array }> {
  const it = chunks[Symbol.asyncIterator]();
  const head = await it.next();
  const first = head.done ? undefined : head.value;
  return {
    first,
    chunks: (async function* () {
      if (first) yield first;
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    })(),
  };
}

/** The format of a source from its name, else from its first non-blank byte. */
export function detectFormat(name: string, firstBytes?: Uint8Array): UpdateFormat {
  const lower = name
    .toLowerCase()
    .replace(/[?#].*$/, '')
    .replace(/\.gz$/, '');
  if (lower.endsWith('.csv')) return 'retraction-watch-csv';
  if (/\.(json|jsonl|ndjson)$/.test(lower)) return 'crossref-json';
  const first = firstBytes?.find(
    (b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf,
  );
  return first === 0x7b || first === 0x5b ? 'crossref-json' : 'retraction-watch-csv';
}
