/**
 * A streaming RFC 4180 reader: quoted fields with commas, doubled quotes and line breaks; CRLF or LF; a UTF-8
 * BOM; chunk boundaries anywhere (a streaming TextDecoder joins split characters). Memory is bounded by the
 * current record, not the file.
 */
export interface CsvRecord {
  fields: string[];
  /** 1-based line where the record starts */
  line: number;
}

export async function* csvRecords(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<CsvRecord> {
  // ignoreBOM: the decoder keeps a leading BOM, so that one is dropped below for bytes and strings alike (the
  // decoder's own dropping, and then ours, took two: a first field starting with U+FEFF lost it)
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const parser = new CsvParser();
  let first = true;
  for await (const chunk of chunks) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    yield* parser.push(text);
  }
  const tail = decoder.decode();
  if (tail) yield* parser.push(tail);
  yield* parser.end();
}

class CsvParser {
  private buf = '';
  private fields: string[] = [];
  private field = '';
  private inQuotes = false;
  /** a quoted field just closed: the next char must be a separator or a line end */
  private line = 1;
  private recordLine = 1;
  private started = false;

  *push(text: string): Generator<CsvRecord> {
    this.buf += text;
    const s = this.buf;
    let i = 0;
    const n = s.length;
    while (i < n) {
      if (this.inQuotes) {
        const q = s.indexOf('"', i);
        if (q < 0) {
          this.field += s.slice(i);
          this.countLines(s, i, n);
          i = n;
          break;
        }
        if (q + 1 >= n) {
          // cannot tell "" from a closing quote yet: keep the quote for the next chunk
          this.field += s.slice(i, q);
          this.countLines(s, i, q);
          this.buf = s.slice(q);
          return;
        }
        this.field += s.slice(i, q);
        this.countLines(s, i, q);
        if (s.charCodeAt(q + 1) === 0x22) {
          this.field += '"';
          i = q + 2;
        } else {
          this.inQuotes = false;
          i = q + 1;
        }
        continue;
      }
      // unquoted: scan to the next special character
      let j = i;
      while (j < n) {
        const c = s.charCodeAt(j);
        if (c === 0x2c || c === 0x0a || c === 0x0d || c === 0x22) break;
        j++;
      }
      if (j > i) {
        this.field += s.slice(i, j);
        this.started = true;
      }
      if (j >= n) {
        i = n;
        break;
      }
      const c = s.charCodeAt(j);
      if (c === 0x22) {
        if (this.field === '') this.inQuotes = true;
        else this.field += '"'; // a stray quote inside an unquoted field: kept as text
        this.started = true;
        i = j + 1;
      } else if (c === 0x2c) {
        this.fields.push(this.field);
        this.field = '';
        this.started = true;
        i = j + 1;
      } else {
        // line end: \r\n, \n or a lone \r
        if (c === 0x0d) {
          if (j + 1 >= n) {
            this.buf = s.slice(j);
            return;
          }
          i = s.charCodeAt(j + 1) === 0x0a ? j + 2 : j + 1;
        } else i = j + 1;
        const rec = this.finishRecord();
        this.line++;
        this.recordLine = this.line;
        if (rec) yield rec;
      }
    }
    this.buf = '';
  }

  *end(): Generator<CsvRecord> {
    if (this.buf === '\r') this.buf = '';
    if (this.buf.startsWith('"') && this.inQuotes) {
      // a file ending right after a closing quote
      this.inQuotes = false;
      this.buf = '';
    }
    const rec = this.finishRecord();
    if (rec) yield rec;
  }

  private finishRecord(): CsvRecord | undefined {
    if (!this.started && this.fields.length === 0 && this.field === '') return undefined; // blank line
    this.fields.push(this.field);
    const rec = { fields: this.fields, line: this.recordLine };
    this.fields = [];
    this.field = '';
    this.started = false;
    return rec;
  }

  private countLines(s: string, from: number, to: number): void {
    for (let k = s.indexOf('\n', from); k >= 0 && k < to; k = s.indexOf('\n', k + 1)) this.line++;
  }
}
