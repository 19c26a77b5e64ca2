import { type WorkerReply, workerJob, workerScript } from '../../base/index.ts';
import type { EnvName } from '../../config/index.ts';
import type { Store } from '../../store/index.ts';
import type { TableParts } from './holdings-table.ts';
import type { ShapesParts } from './link-shapes.ts';

/** A whole index read elsewhere: its table, the apply sequence number its read saw, its platform numbering. */
export interface BuiltIndex {
  seq: number;
  table: TableParts;
  platformNames: string[];
  shapes: ShapesParts;
  ms: number;
}

/** Starts a read of the store's whole index elsewhere (workerBuilder below: a worker thread). */
export type IndexBuilder = (store: Store) => { done: Promise<BuiltIndex>; cancel(): void };

/** What a background build tells its owner (the daemon logs them). */
export interface BuildEvents {
  built(figures: { dois: number; ms: number; bytes: number }): void;
  failed(error: string): void;
}

/** What the build worker is sent: where the store is (it opens it read-only: LMDB shares it between threads). */
export interface BuildRequest {
  dir: string;
  env: EnvName;
  mapSizeBytes: number;
}

export type BuildReply = WorkerReply<BuiltIndex>;

/**
 * Builds an entitlement index on another core (index-build-worker.ts), one worker per build, while this thread
 * answers requests (a million holdings take seconds to read). The table's buffers are transferred, not copied.
 */
export function workerBuilder(script = workerScript('entitlement/holdings-index/index-build-worker.ts')): IndexBuilder {
  return (store: Store) => {
    const request: BuildRequest = { dir: store.opened.dir, env: store.env, mapSizeBytes: store.opened.mapSizeBytes };
    const segments: Uint8Array[] = [];
    return workerJob<BuiltIndex>(script, request, 'the index build worker', (p, answer) => {
      const progress = p as BuildProgress;
      if (progress.kind === 'segment') segments[progress.segment] = progress.bytes;
      else
        answer(
          { segments } satisfies SlotsRequest,
          segments.map((s) => s.buffer as ArrayBuffer),
        );
    });
  };
}

/**
 * What the build worker posts before its reply: each segment of records as it fills (kept here meanwhile), then
 * that the records are read, when it is sent them back (SlotsRequest) to make the slots. A worker that holds the
 * segments while it reads the store lets garbage grow with them (docs/design.md, "The holdings index"): at 20M
 * DOIs the build's peak was 2.2x the index at rest.
 */
export type BuildProgress = { kind: 'segment'; segment: number; bytes: Uint8Array } | { kind: 'records' };
export type SlotsRequest = { segments: Uint8Array[] };
