import { ByteReader, ByteWriter } from '../../bytes/index.ts';
import type { ParsedRecord } from '../../deposit/index.ts';
import { writeState } from './holding-codec.ts';
import { holdingKey, keyTextEncoder, splitHoldingKey } from './holding-key.ts';

/**
 * A file's valid records encoded for the store, in key order, in one buffer: the ingest worker builds it off the
 * main thread and hands it over without copying, so the write transaction only compares and puts bytes. Written
 * by encodeRecords and read by RecordCursor, both here:
 *
 *   per record: varint keyLen, holding key bytes, u8 op (1 upsert, 0 removal), u24 stateLen, state bytes
 *   (the state part of holding-codec's value: access, DOI, vor; never over 64 KiB, the line bound)
 */
export interface EncodedRecords {
  bytes: Uint8Array;
  count: number;
}

export function encodeRecords(records: readonly ParsedRecord[], platform: string): EncodedRecords {
  const p = keyTextEncoder.encode(platform);
  const w = new ByteWriter(64 * 1024 + records.length * 160);
  for (const { key, record } of records) {
    writeKey(w, key, platform, p);
    if (record.deleted === true) {
      w.u8(0);
      w.u24(0);
      continue;
    }
    w.u8(1);
    const lenAt = w.pos;
    w.u24(0);
    writeState(w, key, record.doi, record.accessType, record.vor);
    w.patchU24(lenAt, w.pos - lenAt - 3);
  }
  return { bytes: w.buf.slice(0, w.pos), count: records.length };
}

/** Reads encoded records one by one; the fields describe the current record (views of the buffer, no copies). */
export class RecordCursor {
  private readonly r: ByteReader;
  /** the holding key */
  key: Uint8Array = new Uint8Array(0);
  /** false for a removal */
  upsert = false;
  /** the state bytes are bytes[stateStart, stateStart + stateLen) */
  stateStart = 0;
  stateLen = 0;

  constructor(readonly bytes: Uint8Array) {
    this.r = new ByteReader(bytes);
  }

  next(): boolean {
    const { r, bytes } = this;
    if (r.pos >= bytes.length) return false;
    const keyLen = r.varint();
    this.key = bytes.subarray(r.pos, r.pos + keyLen);
    r.pos += keyLen;
    this.upsert = r.u8() === 1;
    this.stateLen = r.u24();
    this.stateStart = r.pos;
    r.pos += this.stateLen;
    return true;
  }
}

/** The DOI keys of encoded records, in their order. */
export function* doiKeysOfRecords(records: EncodedRecords): Generator<string> {
  const rec = new RecordCursor(records.bytes);
  while (rec.next()) yield splitHoldingKey(rec.key).doiKey;
}

/** The holding key (DOI key, 0x00, platform) with its length, written in place for ASCII keys. */
function writeKey(w: ByteWriter, key: string, platform: string, p: Uint8Array): void {
  const n = key.length;
  w.ensure(5 + n + 1 + p.length);
  const lenAt = w.pos;
  w.varint(n + 1 + p.length);
  const b = w.buf;
  let at = w.pos;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) {
      // non-ASCII key: its UTF-8 length differs; encode it the general way
      w.pos = lenAt;
      const k = holdingKey(key, platform);
      w.varint(k.length);
      w.bytes(k);
      return;
    }
    b[at++] = c;
  }
  b[at++] = 0;
  b.set(p, at);
  w.pos = at + p.length;
}
