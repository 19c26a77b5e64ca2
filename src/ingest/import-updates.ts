import type { UpdateFormat, ParsedUpdates } from './update-readers.ts';
import { readUpdates } from './update-readers.ts';
import type { ReplaceReport, Store } from '../store/index.ts';

/**
 * Applies one update source to the stores (every configured environment gets the same update information).
 * A Retraction Watch CSV is the whole database: it replaces everything that feed gave before (a withdrawn
 * entry disappears). Crossref works JSON names the works it is about: only those works are replaced.
 */
export async function importUpdates(
  stores: readonly Store[],
  format: UpdateFormat,
  chunks: AsyncIterable<Uint8Array>,
  onProgress?: (rows: number, bytes: number) => void,
): Promise<{ parsed: ParsedUpdates; applied: Record<string, ReplaceReport> }> {
  const parsed = await readUpdates(format, chunks, onProgress);
  const mode = format === 'retraction-watch-csv' ? 'snapshot' : 'works';
  const applied: Record<string, ReplaceReport> = {};
  for (const store of stores) applied[store.env] = await store.replaceUpdates(format, mode, parsed.works);
  return { parsed, applied };
}

/** The format of a source from its name, else from its first non-blank byte. */
export function detectFormat(name: string, firstBytes?: Uint8Array): UpdateFormat {
  const lower = name.toLowerCase().replace(/[?#].*$/, '').replace(/\.gz$/, '');
  if (lower.endsWith('.csv')) return 'retraction-watch-csv';
  if (/\.(json|jsonl|ndjson)$/.test(lower)) return 'crossref-json';
  const first = firstBytes?.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf);
  return first === 0x7b || first === 0x5b ? 'crossref-json' : 'retraction-watch-csv';
}
