import { JsonBytes } from '../bytes/index.ts';
import type { EnvName } from '../config/index.ts';
import {
  changedParts,
  type HoldingChange,
  type HoldingState,
  type HoldingView,
  type LiveHolding,
  type Store,
} from '../store/index.ts';

/**
 * One `--dump` line: `{"env","platform","doi","accessType"?,"vor"?,"updated"}`. The field order is part of the
 * format (replicas compare dumps byte for byte); `updated` is the LastModified of the file that last changed the
 * holding, never a wall clock.
 */
interface DumpLine {
  env: EnvName;
  platform: string;
  doi: string;
  accessType?: string;
  vor?: { url: string; contentType?: string }[];
  updated: string;
}

export function dumpLine(env: EnvName, h: LiveHolding): DumpLine {
  return lineOf(env, h.platform, h.state, h.updated);
}

/**
 * The --dump lines of a store's live holdings written from the stored bytes (holding-json.ts), nothing decoded:
 * a million lines a few seconds. `emit` gets each full chunk of lines (and must use it before returning), `each`
 * is called per line, and after a chunk `wanted` false stops it. test/store/holdings/holding-json.test.ts holds it to
 * JSON.stringify(dumpLine(...)), byte for byte.
 */
export function writeDumpLines(
  store: Store,
  filter: { platform?: string; doiKey?: string },
  emit: (chunk: Uint8Array) => void,
  each: () => void,
  wanted: () => boolean = () => true,
): void {
  const out = new JsonBytes();
  const head = `{"env":${JSON.stringify(store.env)},"platform":`;
  let lastUpdated = -1;
  let updatedJson = '';
  for (const h of store.storedHoldings(filter)) {
    out.ascii(head);
    out.quoted(h.key, h.platformStart, h.key.length);
    out.ascii(',"doi":');
    out.quoted(h.doiBytes, h.doiStart, h.doiEnd);
    if (h.access) out.ascii(`,"accessType":${h.accessJson}`);
    if (h.vorCount > 0) {
      out.ascii(',"vor":');
      h.writeVor(out);
    }
    const updated = h.updated;
    if (updated !== lastUpdated) {
      // holdings of one file share it: the date is formatted once per run of them
      lastUpdated = updated;
      updatedJson = `,"updated":"${new Date(updated).toISOString()}"}\n`;
    }
    out.ascii(updatedJson);
    each();
    if (out.pos >= CHUNK_BYTES) {
      emit(out.buf.subarray(0, out.pos));
      if (!wanted()) return;
      out.reset();
    }
  }
  if (out.pos > 0) emit(out.buf.subarray(0, out.pos));
}
const CHUNK_BYTES = 64 * 1024;

/** The fields in their fixed order (a removed holding has only its DOI key as `state`). */
function lineOf(env: EnvName, platform: string, state: HoldingState, updated: number): DumpLine {
  const line = { env, platform, doi: state.doi } as DumpLine;
  if (state.accessType) line.accessType = state.accessType;
  if (state.vor) line.vor = state.vor;
  line.updated = new Date(updated).toISOString();
  return line;
}

/** One event of a `--dump --history` line: the file that made it is named (this is the operator's view). */
interface DumpEvent {
  event: string;
  time: string;
  file: string;
  from?: string;
  to?: string;
  /** `updated` events: what changed, by the status page's rule (changedParts) */
  changed?: HoldingChange[];
}

/**
 * A `--dump --history` line: the `--dump` fields (a removed holding has only `doi` = its key, and `updated` = its
 * removal), `live`, and `history`, oldest event first. Every value comes from the store, so replicas and a
 * crashed-then-recovered store dump the same bytes as a clean one.
 */
export function historyDumpLine(
  env: EnvName,
  h: HoldingView,
  fileOf: (seq: number) => string,
): DumpLine & { live: boolean; history: DumpEvent[] } {
  const line = lineOf(env, h.platform, h.state ?? { doi: h.doiKey }, h.updated) as DumpLine & {
    live: boolean;
    history: DumpEvent[];
  };
  line.live = h.live;
  line.history = h.events.map((e) => {
    const out: DumpEvent = { event: e.kind, time: new Date(e.time).toISOString(), file: fileOf(e.fileSeq) };
    if (e.oldAccess) out.from = e.oldAccess;
    if (e.newAccess) out.to = e.newAccess;
    const changed = changedParts(e);
    if (changed) out.changed = changed;
    return out;
  });
  return line;
}
