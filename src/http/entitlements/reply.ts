import { libc } from '../../base/index.ts';
import { type CopySource, JsonBytes } from '../../bytes/index.ts';
import type { IntegratorSettings } from '../../config/index.ts';
import {
  ACCESS,
  type ContentLink,
  ENTITLED_VALUES,
  ENTITLEMENT_SOURCES,
  type EntitlementService,
  type Entries,
  INVALID,
  LOOKUP_FAILED,
  LOOKUP_NONE,
  NO_DOI,
  OPEN,
  type PlatformVerdict,
  UNKNOWN,
} from '../../entitlement/index.ts';
import type { UpdatesTable } from '../../store/index.ts';

/**
 * The Entitlement API's reply, written once every entry is decided, as bytes into one reused buffer (read it
 * before the next request's render): the DOI as sent, each answer's fields, an open holding's vor JSON copied
 * from the index, and the `updates` list from the Updates API's pre-rendered table.
 */

/** a reply's buffer to begin with: a 100-DOI answer fits; it grows for a larger one */
const REPLY_BYTES = 256 * 1024;
const reply = new JsonBytes(REPLY_BYTES, libc()); // native copies: an open DOI's answer is mostly copied
const encoder = new TextEncoder();
/** an answer from the deposit after its `doi`, up to its `vor`, by the index's access code */
const OPEN_TEXT = ACCESS.map((a) => `,"statusCode":200,"entitled":"yes","accessType":"${a}","source":"oa_platform"`);
const OPEN_ANSWER = OPEN_TEXT.map((text) => encoder.encode(text));
const VOR_KEY = ',"vor":';
const VOR = encoder.encode(VOR_KEY);
/** OPEN_ANSWER, and OPEN_ANSWER with VOR after it, as sources for the open-DOI copies */
const OPEN_HEAD = OPEN_ANSWER.map((head) => reply.source(head));
const OPEN_HEAD_VOR = OPEN_TEXT.map((text) => reply.source(encoder.encode(text + VOR_KEY)));
const DOI_OPEN = encoder.encode('{"doi":"');
const NO_UPDATES = encoder.encode('[]');
/** the `doi` of an entry by metadata that resolved to none (GetFTR's "unknown") */
const DOI_UNKNOWN = encoder.encode('{"doi":"unknown"');
/** a 400 entry without doi, when no metadata lookup is configured */
const NOT_LOOKED_UP = 'this entry has no doi: entitlements are answered by DOI only, not by title or other metadata';

export function render(
  service: EntitlementService,
  integrator: IntegratorSettings,
  updatesOf: () => UpdatesTable,
  e: Entries,
): Uint8Array {
  const { sent, plain, uids, kinds, keysOf, verdicts, body, spans, hashes, vor } = e;
  const updates = integrator.updates ? updatesOf() : undefined;
  let orgBytes: Uint8Array | undefined; // every platform answer of a request carries the request's org
  let invalid = 0;
  let none = 0;
  let open = 0;
  const out = reply.start().ascii('{"entitlements":[');
  // writeOpenSpan's sources, where it may run (their addresses cost a native call each)
  const bodySource = spans && !updates ? out.source(body!) : undefined;
  const vorSource = spans && !updates ? out.source(vor.buf) : undefined;
  for (let i = 0; i < e.count; i++) {
    if (i > 0) out.ascii(',');
    const kind = kinds[i]!;
    if (kind === OPEN && spans && sent[i] === undefined && uids[i] === undefined && !updates) {
      writeOpenSpan(
        out,
        bodySource!,
        spans[2 * i]!,
        spans[2 * i + 1]!,
        e.access[i]!,
        vorSource!,
        e.vorStart[i]!,
        e.vorEnd[i]!,
      );
      open++;
      continue;
    }
    if (kind === NO_DOI) out.ascii('{"statusCode":400,"message":').text(JSON.stringify(e.message[i] ?? NOT_LOOKED_UP));
    else if (kind === LOOKUP_NONE || kind === LOOKUP_FAILED) out.bytes(DOI_UNKNOWN);
    else if (spans && sent[i] === undefined)
      out
        .bytes(DOI_OPEN)
        .range(body!, spans[2 * i]!, spans[2 * i + 1]!)
        .ascii('"'); // printable ASCII, no escapes: scanned so
    else if (plain[i] === 1) out.bytes(DOI_OPEN).ascii(sent[i]!).ascii('"');
    else out.ascii('{"doi":').text(JSON.stringify(sent[i]));
    if (kind === NO_DOI) invalid++;
    else if (kind === INVALID) {
      out.ascii(',"statusCode":400,"message":').text(JSON.stringify(e.message[i]));
      invalid++;
    } else if (kind === UNKNOWN || kind === LOOKUP_NONE) {
      out.ascii(',"statusCode":404');
      none++;
    } else if (kind === LOOKUP_FAILED) {
      // as a platform's time-out answers (504, maybe, unknown), with why the lookup did not complete
      out.ascii(',"statusCode":504,"message":').text(JSON.stringify(e.message[i]));
      out.ascii(',"entitled":"maybe","source":"unknown"');
      service.count('unknown');
    } else if (kind === OPEN) {
      out.bytes(OPEN_ANSWER[e.access[i]!]!); // ~80 bytes: a native copy
      if (e.vorEnd[i]! > e.vorStart[i]!) out.bytes(VOR).range(vor.buf, e.vorStart[i]!, e.vorEnd[i]!);
      open++;
    } else {
      const v = verdicts[i]!;
      if (v.org !== undefined) orgBytes ??= encoder.encode(JSON.stringify(v.org));
      writeVerdict(out, v, orgBytes, integrator.counter);
      service.count(v.source);
    }
    const uid = uids[i];
    if (uid !== undefined) out.ascii(',"uid":').text(JSON.stringify(uid));
    if (updates) {
      const list =
        hashes[i]! >= 0
          ? updates.getHashed(hashes[i]!, body!, spans![2 * i]!, spans![2 * i + 1]!)
          : keysOf[i] !== undefined
            ? updates.get(keysOf[i]!)
            : undefined;
      out.ascii(',"updates":').bytes(list ?? NO_UPDATES);
    }
    out.ascii('}');
  }
  service.count('invalid', invalid);
  service.count('none', none);
  service.count('oa_platform', open);
  return out.ascii(']}').view();
}

/**
 * The most common answer, written in one go: an open DOI of a plain body, without uid or updates:
 * `{"doi":"<bytes>"<head>,"vor":<vor JSON>}` (the same bytes as the general branches of render write), by native
 * copies from the body, the constants and the request's vor JSON.
 */
function writeOpenSpan(
  out: JsonBytes,
  body: CopySource,
  start: number,
  end: number,
  access: number,
  vor: CopySource,
  vorStart: number,
  vorEnd: number,
): void {
  out
    .bytes(DOI_OPEN)
    .copyFrom(body, start, end - start)
    .byte(0x22); // "
  if (vorEnd > vorStart) {
    const head = OPEN_HEAD_VOR[access]!;
    out.copyFrom(head, 0, head.bytes.length).copyFrom(vor, vorStart, vorEnd - vorStart);
  } else {
    const head = OPEN_HEAD[access]!;
    out.copyFrom(head, 0, head.bytes.length);
  }
  out.byte(0x7d); // }
}

/**
 * A platform's verdict after its `doi`: in GetFTR's member order, `document`, `vor`, `av`, `licenses`, then `org`
 * (with the platform's customerID last, for a counter integrator).
 */
function writeVerdict(out: JsonBytes, v: PlatformVerdict, orgBytes: Uint8Array | undefined, counter: boolean): void {
  out.bytes(verdictHead(v));
  if (v.document !== undefined) out.ascii(',"document":').jsonString(v.document);
  if (v.vor !== undefined) writeLinks(out, ',"vor":[', v.vor);
  if (v.av !== undefined) writeLinks(out, ',"av":[', v.av);
  if (v.licenses !== undefined) {
    out.ascii(',"licenses":[');
    for (let k = 0; k < v.licenses.length; k++) {
      const item = v.licenses[k]!;
      out
        .ascii(k === 0 ? '{"type":' : ',{"type":')
        .jsonString(item.type)
        .ascii(',"url":')
        .jsonString(item.url)
        .ascii(',"startDate":')
        .jsonString(item.startDate)
        .ascii('}');
    }
    out.ascii(']');
  }
  if (v.org === undefined) return;
  out.ascii(',"org":');
  if (!counter || v.customerID === undefined) {
    out.bytes(orgBytes!);
    return;
  }
  // the request's org without its closing brace, then the customerID: the org bytes stay one per request
  out
    .range(orgBytes!, 0, orgBytes!.length - 1)
    .ascii(orgBytes!.length > 2 ? ',"customerID":' : '"customerID":')
    .jsonString(v.customerID)
    .ascii('}');
}

/** `lead` (`,"vor":[` or `,"av":[`), the links `{"url", "contentType"?}`, and the closing `]`. */
function writeLinks(out: JsonBytes, lead: string, links: readonly ContentLink[]): void {
  out.ascii(lead);
  for (let k = 0; k < links.length; k++) {
    const item = links[k]!;
    out.ascii(k === 0 ? '{"url":' : ',{"url":').jsonString(item.url);
    if (item.contentType !== undefined) out.ascii(',"contentType":').jsonString(item.contentType);
    out.ascii('}');
  }
  out.ascii(']');
}

/** `,"statusCode":…,"entitled":…,"accessType":…,"source":…` of a verdict, encoded once per combination. */
function verdictHead(v: PlatformVerdict): Uint8Array {
  // every field is from a closed set: the combination is a small number (statusCode 200 or 504)
  const key =
    (v.statusCode === 504 ? 1 : 0) +
    2 *
      (ENTITLED_VALUES.indexOf(v.entitled) +
        3 * (ACCESS.indexOf(v.accessType) + 5 * ENTITLEMENT_SOURCES.indexOf(v.source)));
  let head = verdictHeads[key];
  if (!head) {
    const access = v.accessType ? `,"accessType":"${v.accessType}"` : '';
    head = encoder.encode(`,"statusCode":${v.statusCode},"entitled":"${v.entitled}"${access},"source":"${v.source}"`);
    verdictHeads[key] = head;
  }
  return head;
}
const verdictHeads: Uint8Array[] = [];
