import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MAX_DOIS_PER_REQUEST, NOT_PLAIN } from '../../doi/index.ts';
import { EntitlementsRequest, type Entries, Org, releaseEntries, takeEntries } from '../../entitlement/index.ts';
import { describeSchemaFault, errorResponse, parseJson, scanEntitlementBody, utf8Text } from '../wire/index.ts';

/**
 * An Entitlement API request read into its entries (entitlement/request-entries.ts decides them): a body in the
 * plain shape from its bytes, any other parsed and checked in full.
 */

const checkRequest = TypeCompiler.Compile(EntitlementsRequest);
const checkOrg = TypeCompiler.Compile(Org);
/** where the plain-body scanner found the org (read before the request's first await) */
const orgSpan = new Int32Array(2);

interface ReadRequest {
  org?: Org;
  /** the entries of a parsed body (a plain body's are in entries.spans) */
  dois?: EntitlementsRequest['dois'];
  entries: Entries;
}

/**
 * The request's org and entries (give them back with releaseEntries). A body in the plain shape
 * (scanEntitlementBody: DOI strings of printable ASCII, and an org object) is read from its bytes, the org slice
 * alone parsed; any other body is parsed and checked in full. Both readings mean the same
 * (test/http/entitlements/plain.test.ts).
 */
export function readRequest(body: Uint8Array): ReadRequest | Response {
  const e = takeEntries();
  const count = scanEntitlementBody(body, e.spanBuffer, MAX_DOIS_PER_REQUEST, orgSpan, e.hashes);
  if (count >= 0) {
    const org = orgSpan[0]! < 0 ? undefined : orgOf(body.subarray(orgSpan[0], orgSpan[1]));
    if (org !== INVALID_ORG) {
      e.count = count;
      e.body = body;
      e.spans = e.spanBuffer;
      return { org, entries: e };
    }
  }
  const parsed = parseJson(body);
  if (parsed instanceof Response || !checkRequest.Check(parsed.value)) {
    releaseEntries(e);
    return parsed instanceof Response
      ? parsed
      : errorResponse(400, 'BAD_REQUEST', describeSchemaFault(checkRequest, parsed.value, SHAPE, ENTRY));
  }
  const req = parsed.value as EntitlementsRequest;
  e.count = req.dois.length;
  e.hashes.fill(NOT_PLAIN, 0, e.count);
  return { org: req.org, dois: req.dois, entries: e };
}

/**
 * The org object of a plain body, or INVALID_ORG when the slice is not an org the schema takes (the general path
 * then says why). An integrator sends the same few orgs again and again: their readings are remembered, by text.
 */
function orgOf(slice: Uint8Array): Org | typeof INVALID_ORG {
  const text = utf8Text(slice);
  if (text === undefined) return INVALID_ORG; // not UTF-8: the general path says where
  let org = slice.length <= MAX_REMEMBERED_ORG_BYTES ? orgReadings.get(text) : undefined;
  if (org === undefined) {
    try {
      const value = JSON.parse(text) as unknown;
      org = checkOrg.Check(value) ? value : INVALID_ORG;
    } catch {
      org = INVALID_ORG;
    }
    if (slice.length <= MAX_REMEMBERED_ORG_BYTES) {
      if (orgReadings.size >= MAX_ORG_READINGS) orgReadings.clear();
      orgReadings.set(text, org);
    }
  }
  return org;
}
const INVALID_ORG = Symbol('invalid org');
const orgReadings = new Map<string, Org | typeof INVALID_ORG>();
const MAX_ORG_READINGS = 4096;
/** longer than any org the schema takes (its fields' bounds): a padded one is read, not remembered */
const MAX_REMEMBERED_ORG_BYTES = 4096;

const SHAPE = '{"org"?: {...}, "dois": ["10.xxxx/...", {"doi": "10.xxxx/...", "uid"?: "..."}, ...]}';
const ENTRY = 'an entry is a DOI string or {"doi": "10.xxxx/...", "uid"?: "..."}';
