import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { ByteReader, ByteWriter } from '../../bytes/index.ts';
import type { KeyedCursor, RecordView } from '../apply/index.ts';

/**
 * A sorted run: records of many files merged in key order, one key's records in apply order, each naming its file
 * by its place in the pass. The format, written by RunWriter and read by RunCursor (from a file) and ChunkCursor
 * (from memory), both here:
 *
 *   per record: varint keyLen, holding key bytes, varint file index, u8 op (1 upsert, 0 removal), u24 stateLen,
 *   state bytes (encoded-records.ts's, as they came)
 */

/** a record's bytes are never more than this: a line is at most 64 KiB, its key and header a few hundred bytes */
const MAX_RECORD_BYTES = 80 * 1024;
/** bytes a run reads or writes at a time */
const BLOCK_BYTES = 1024 * 1024;

/** Appends one record in the run format. */
export function writeRunRecord(w: ByteWriter, rec: RecordView, file: number): void {
  w.ensure(16 + rec.key.length + rec.stateLen);
  w.varint(rec.key.length);
  w.bytes(rec.key);
  w.varint(file);
  w.u8(rec.upsert ? 1 : 0);
  w.u24(rec.stateLen);
  w.copy(rec.bytes, rec.stateStart, rec.stateStart + rec.stateLen);
}

/** Writes one run file; close() makes it durable (a crash after the pass began must find it whole). */
export class RunWriter {
  private readonly fd: number;
  private readonly w = new ByteWriter(BLOCK_BYTES + MAX_RECORD_BYTES);
  records = 0;
  bytes = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  add(rec: RecordView, file: number): void {
    writeRunRecord(this.w, rec, file);
    this.records++;
    if (this.w.pos >= BLOCK_BYTES) this.flush();
  }

  close(): void {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }

  /** Closes without making it durable (the pass is given up). */
  discard(): void {
    closeSync(this.fd);
  }

  private flush(): void {
    let at = 0;
    while (at < this.w.pos) at += writeSync(this.fd, this.w.buf, at, this.w.pos - at);
    this.bytes += this.w.pos;
    this.w.reset();
  }
}

/** The fields of the current record (views of the cursor's buffer, valid until its next move). */
abstract class RunRecord implements KeyedCursor, RecordView {
  key: Uint8Array = new Uint8Array(0);
  upsert = false;
  bytes: Uint8Array = new Uint8Array(0);
  stateStart = 0;
  stateLen = 0;
  /** the record's file: its index in the pass */
  file = 0;
  abstract next(): boolean;

  /** Reads the record at r.pos. */
  protected read(r: ByteReader): void {
    const keyLen = r.varint();
    this.key = r.buf.subarray(r.pos, r.pos + keyLen);
    r.pos += keyLen;
    this.file = r.varint();
    this.upsert = r.u8() === 1;
    this.stateLen = r.u24();
    this.stateStart = r.pos;
    this.bytes = r.buf;
    r.pos += this.stateLen;
  }
}

/** Reads a run file from its start, a block at a time. */
export class RunCursor extends RunRecord {
  private fd: number | undefined;
  private readonly buf = Buffer.allocUnsafe(BLOCK_BYTES + MAX_RECORD_BYTES);
  private r = new ByteReader(this.buf, 0);
  private end = 0;
  private eof = false;

  constructor(readonly path: string) {
    super();
    this.fd = openSync(path, 'r');
  }

  next(): boolean {
    if (this.end - this.r.pos < MAX_RECORD_BYTES && !this.eof) this.refill();
    if (this.r.pos >= this.end) {
      this.close();
      return false;
    }
    this.read(this.r);
    return true;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Moves the unread bytes to the front and reads on behind them (the current record's views are then spent). */
  private refill(): void {
    const left = this.end - this.r.pos;
    this.buf.copyWithin(0, this.r.pos, this.end);
    this.end = left;
    this.r.pos = 0;
    while (this.end < BLOCK_BYTES) {
      const n = readSync(this.fd!, this.buf, this.end, this.buf.length - this.end, null);
      if (n === 0) {
        this.eof = true;
        break;
      }
      this.end += n;
    }
  }
}

/** Reads run-format records from memory (a chunk gathered from the runs). */
export class ChunkCursor extends RunRecord {
  private readonly r: ByteReader;
  constructor(
    buf: Uint8Array,
    private readonly end: number,
  ) {
    super();
    this.r = new ByteReader(buf, 0);
  }

  next(): boolean {
    if (this.r.pos >= this.end) return false;
    this.read(this.r);
    return true;
  }
}
