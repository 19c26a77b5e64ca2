import { ByteReader, type ByteWriter, sameBytes } from '../../bytes/index.ts';
import type { AccessType, ContentType, VorItem } from '../../deposit/index.ts';

/**
 * Compact binary value of one holding, written and read only here (bytes per holding is a tracked figure;
 * docs/design.md, "Store layout"):
 *
 *   u8 flags (bit0: live; a tombstone keeps only its history)
 *   varint stateLen, then the state: u8 access | varint doiLen + DOI (0 when equal to the key) | varint vorCount,
 *     per item: u8 (contentType code | 0x80 when the URL embeds the DOI), varint len + bytes (the URL, or the parts
 *     before and after the DOI)
 *   u48 updated (ms, LastModified of the file that last changed the holding)
 *   events to the end, each: u8 kind, u48 time (ms), varint fileSeq, u8 oldAccess, u8 newAccess | change flags
 *     (an `updated` event: 0x08 the links changed, 0x10 the DOI's spelling changed; events written before these
 *     flags existed carry none, so their readers see an update whose details were not recorded)
 *
 * The state bytes come first so that "record equal to the stored state" is one byte comparison, no decode.
 */

export const ACCESS_CODES: readonly (AccessType | undefined)[] = [undefined, 'paid', 'open', 'free', 'permFree'];
export const CONTENT_CODES: readonly (ContentType | undefined)[] = [
  undefined,
  'application/pdf',
  'text/html',
  'application/epub+zip',
  'other',
];

export type EventKind = 'added' | 'updated' | 'removed' | 're-added';
const EVENT_KINDS: readonly EventKind[] = ['added', 'updated', 'removed', 're-added'];

/** What an `updated` event changed besides the access type (which old -> new access shows). */
type StateChange = 'links' | 'doi';

/** What an event changed, as `--dump --history` and the status page both say it */
export type HoldingChange = 'access' | StateChange;

/**
 * The one rule for what an `updated` event changed: the access type when old and new differ, then the parts the
 * event recorded (an event written before they were recorded has none); undefined for the other kinds.
 */
export function changedParts(e: HoldingEvent): HoldingChange[] | undefined {
  if (e.kind !== 'updated') return undefined;
  const changed: HoldingChange[] = e.oldAccess !== e.newAccess ? ['access'] : [];
  if (e.changes) changed.push(...e.changes);
  return changed;
}

export interface HoldingEvent {
  kind: EventKind;
  time: number;
  fileSeq: number;
  oldAccess?: AccessType;
  newAccess?: AccessType;
  /** `updated` events only: the other parts of the state that changed (none recorded by older versions) */
  changes?: StateChange[];
}

const ACCESS_MASK = 0x07;
const LINKS_CHANGED = 0x08;
const DOI_CHANGED = 0x10;

export interface HoldingState {
  doi: string;
  accessType?: AccessType;
  vor?: VorItem[];
}

interface DecodedHolding {
  live: boolean;
  /** present when live */
  state?: HoldingState;
  updated: number;
  events: HoldingEvent[];
}

const EVENT_MAX = 1 + 6 + 5 + 2;
const textDecoder = new TextDecoder('utf-8', { ignoreBOM: true }); // stored text reads back whole (bytes.ts)

/** Appends one event, access types as codes (the write path never decodes them). */
function writeEvent(
  w: ByteWriter,
  kind: EventKind,
  time: number,
  fileSeq: number,
  oldAccess: number,
  newAccess: number,
): void {
  w.ensure(EVENT_MAX);
  w.u8(EVENT_KINDS.indexOf(kind) + 1);
  w.u48(time);
  w.varint(fileSeq);
  w.u8(oldAccess);
  w.u8(newAccess);
}

/** Writes the state part of a live holding (access, DOI when it differs from the key, vor). */
export function writeState(
  w: ByteWriter,
  key: string,
  doi: string,
  accessType: AccessType | undefined,
  vor: VorItem[] | undefined,
): void {
  w.u8(codeOf(ACCESS_CODES, accessType));
  if (doi === key) w.varint(0);
  else w.str(doi);
  if (!vor) {
    w.varint(0);
    return;
  }
  w.varint(vor.length);
  for (const item of vor) {
    const ct = codeOf(CONTENT_CODES, item.contentType);
    const url = item.url;
    // URLs usually embed the DOI, most often at the end: store only what surrounds it
    const at = url.endsWith(doi) ? url.length - doi.length : url.indexOf(doi);
    if (at < 0) {
      w.u8(ct);
      w.str(url);
    } else {
      w.u8(ct | 0x80);
      w.strRange(url, 0, at);
      w.strRange(url, at + doi.length, url.length);
    }
  }
}

/** A value's code: its place in `codes` (ACCESS_CODES, CONTENT_CODES), 0 when absent or not one of them. */
function codeOf<T>(codes: readonly (T | undefined)[], value: T | undefined): number {
  return Math.max(codes.indexOf(value), 0);
}

/**
 * The value of a live holding: `state` bytes (writeState's, taken from an encoded record), `time` as its
 * updated time, the old value's events (none for a new holding) and one more: `kind`, old -> new access type.
 */
export function writeLive(
  out: ByteWriter,
  src: Uint8Array,
  stateStart: number,
  stateLen: number,
  time: number,
  old: Uint8Array | undefined,
  oldLayout: ValueLayout | undefined,
  oldEnd: number,
  kind: 'added' | 'updated' | 're-added',
  fileSeq: number,
  holdingKey: Uint8Array,
): void {
  out.reset();
  out.u8(LIVE);
  out.varint(stateLen);
  out.copy(src, stateStart, stateStart + stateLen);
  out.u48(time);
  if (old) out.copy(old, oldLayout!.eventsStart, oldEnd);
  const flags = kind === 'updated' ? changeFlags(old!, oldLayout!, src, stateStart, stateLen, holdingKey) : 0;
  writeEvent(out, kind, time, fileSeq, old ? accessCodeOfValue(old, oldLayout!) : 0, src[stateStart]! | flags);
}

/**
 * Which parts besides the access byte differ between a live value's state and a new state (writeState's layout:
 * access, DOI, links). Runs only for an `updated` holding, so its cost is off the common paths. Links are stored
 * around the DOI's spelling, so when the spelling changed their bytes say nothing: they are decoded and compared.
 */
function changeFlags(
  old: Uint8Array,
  layout: ValueLayout,
  b: Uint8Array,
  bStart: number,
  bLen: number,
  holdingKey: Uint8Array,
): number {
  const oldDoiEnd = doiPartEnd(old, layout.stateStart);
  const newDoiEnd = doiPartEnd(b, bStart);
  if (sameBytes(old, layout.stateStart + 1, oldDoiEnd, b, bStart + 1, newDoiEnd))
    return sameBytes(old, oldDoiEnd, layout.stateEnd, b, newDoiEnd, bStart + bLen) ? 0 : LINKS_CHANGED;
  const doiKey = textDecoder.decode(holdingKey.subarray(0, holdingKey.indexOf(0)));
  const links = (bytes: Uint8Array, start: number) => JSON.stringify(decodeState(doiKey, bytes, start).vor ?? []);
  return DOI_CHANGED | (links(old, layout.stateStart) === links(b, bStart) ? 0 : LINKS_CHANGED);
}

/** Where the DOI part (its varint length and bytes) of a state starting at `start` ends. */
function doiPartEnd(bytes: Uint8Array, start: number): number {
  const r = new ByteReader(bytes, start + 1);
  const len = r.varint();
  return r.pos + len;
}

/** A removed holding: no state, and the old value's history with a `removed` event: the history outlives it. */
export function writeTombstone(
  out: ByteWriter,
  old: Uint8Array,
  oldLayout: ValueLayout,
  oldEnd: number,
  time: number,
  fileSeq: number,
): void {
  out.reset();
  out.u8(0);
  out.varint(0);
  out.u48(time);
  out.copy(old, oldLayout.eventsStart, oldEnd);
  writeEvent(out, 'removed', time, fileSeq, accessCodeOfValue(old, oldLayout), 0);
}

/** The first byte's live flag: a tombstone is not a holding (dump, counts and answers skip it). */
export function isLive(value: Uint8Array): boolean {
  return (value[0]! & LIVE) === LIVE;
}
const LIVE = 1;

/** The state bytes of two values (or of a value and an encoded record) are equal: no decode needed. */
export function sameState(old: Uint8Array, layout: ValueLayout, b: Uint8Array, bStart: number, bLen: number): boolean {
  return sameBytes(old, layout.stateStart, layout.stateEnd, b, bStart, bStart + bLen);
}

/** Offsets of a stored value's parts, read without decoding anything. */
interface ValueLayout {
  live: boolean;
  stateStart: number;
  stateEnd: number;
  /** start of the event list (after `updated`) */
  eventsStart: number;
}

export function layoutOf(value: Uint8Array): ValueLayout {
  const r = new ByteReader(value, 1);
  const stateLen = r.varint();
  const stateStart = r.pos;
  const stateEnd = stateStart + stateLen;
  return { live: isLive(value), stateStart, stateEnd, eventsStart: stateEnd + 6 };
}

/** A stored value's access code, or -1 for a tombstone: read in place, nothing made (the access counters' count). */
export function liveAccessCode(value: Uint8Array): number {
  if (!isLive(value)) return -1;
  let at = 1;
  while (value[at]! & 0x80) at++; // the state's varint length, then the state: its access code first
  return value[at + 1]!;
}

/** The access code of a stored value's state (0 for a tombstone or no access type). */
function accessCodeOfValue(value: Uint8Array, layout: ValueLayout): number {
  return layout.live ? value[layout.stateStart]! : 0;
}

export function decodeHolding(key: string, value: Uint8Array): DecodedHolding {
  const layout = layoutOf(value);
  const state = layout.live ? decodeState(key, value, layout.stateStart) : undefined;
  const r = new ByteReader(value, layout.stateEnd);
  const updated = r.u48();
  const events: HoldingEvent[] = [];
  while (r.pos < value.length) {
    const kind = EVENT_KINDS[r.u8() - 1]!;
    const time = r.u48();
    const fileSeq = r.varint();
    const oldAccess = ACCESS_CODES[r.u8() & ACCESS_MASK];
    const newByte = r.u8();
    const newAccess = ACCESS_CODES[newByte & ACCESS_MASK];
    const e: HoldingEvent = { kind, time, fileSeq };
    if (oldAccess) e.oldAccess = oldAccess;
    if (newAccess) e.newAccess = newAccess;
    if (kind === 'updated') {
      e.changes = [];
      if (newByte & LINKS_CHANGED) e.changes.push('links');
      if (newByte & DOI_CHANGED) e.changes.push('doi');
    }
    events.push(e);
  }
  return { live: layout.live, state, updated, events };
}

/** A live value's state and updated time, its history left unread (dumps and read models need only these). */
export function decodeLive(key: string, value: Uint8Array): { state: HoldingState; updated: number } {
  const layout = layoutOf(value);
  return { state: decodeState(key, value, layout.stateStart), updated: new ByteReader(value, layout.stateEnd).u48() };
}

/** The state written by writeState, read from `start` on (in a stored value or an encoded record). */
export function decodeState(key: string, bytes: Uint8Array, start: number): HoldingState {
  const r = new ByteReader(bytes, start);
  const accessType = ACCESS_CODES[r.u8()];
  const doiLen = r.varint();
  let doi = key;
  if (doiLen > 0) {
    doi = textDecoder.decode(bytes.subarray(r.pos, r.pos + doiLen));
    r.pos += doiLen;
  }
  const n = r.varint();
  let vor: VorItem[] | undefined;
  if (n > 0) {
    vor = [];
    for (let i = 0; i < n; i++) {
      const tag = r.u8();
      const url = tag & 0x80 ? r.str() + doi + r.str() : r.str();
      const contentType = CONTENT_CODES[tag & 0x7f];
      vor.push(contentType ? { url, contentType } : { url });
    }
  }
  const state: HoldingState = { doi };
  if (accessType) state.accessType = accessType;
  if (vor) state.vor = vor;
  return state;
}

export interface HoldingView extends DecodedHolding {
  doiKey: string;
  platform: string;
}

/** A live holding as the store orders them: DOI key, then platform. */
export interface LiveHolding {
  doiKey: string;
  platform: string;
  state: HoldingState;
  /** LastModified (ms) of the file that last changed it */
  updated: number;
}
