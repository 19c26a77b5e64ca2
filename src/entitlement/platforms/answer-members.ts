import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parseSourceDate } from '../../update-record/index.ts';
import {
  type ContentLink,
  type License,
  MAX_PLATFORM_ITEMS,
  PlatformCustomerID,
  PlatformLicense,
  PlatformLink,
} from '../api/index.ts';

/**
 * The members of a platform's entry that are read item by item (docs/interface.md, "For platforms"): `av`,
 * `licenses` and `org.customerID`. A malformed item is dropped and the rest kept, since one bad licence says
 * nothing of the entry's `entitled`; a member that is not a list (or an org that is no object) is dropped whole.
 * Only the members we describe are passed on: an item's other members are left out.
 */

const checkLink = TypeCompiler.Compile(PlatformLink);
/** An `av` list's well-formed links among its first 32 items; undefined when none is left or it is no list. */
export function readLinks(value: unknown): ContentLink[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: ContentLink[] = [];
  for (const item of value.slice(0, MAX_PLATFORM_ITEMS))
    if (checkLink.Check(item))
      out.push(item.contentType === undefined ? { url: item.url } : { url: item.url, contentType: item.contentType });
  return out.length > 0 ? out : undefined;
}

const checkLicense = TypeCompiler.Compile(PlatformLicense);
/** A `licenses` list's well-formed licences among its first 32 items (a startDate that is a real day); undefined when none. */
export function readLicenses(value: unknown): License[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: License[] = [];
  // the pattern says the shape; 2021-02-30 has it, and is no day
  for (const item of value.slice(0, MAX_PLATFORM_ITEMS))
    if (checkLicense.Check(item) && parseSourceDate(item.startDate) === item.startDate)
      out.push({ type: item.type, url: item.url, startDate: item.startDate });
  return out.length > 0 ? out : undefined;
}

const checkCustomerID = TypeCompiler.Compile(PlatformCustomerID);
/** The customerID of an entry's `org`, when it is a string of 1 to 256 characters. */
export function readCustomerID(org: unknown): string | undefined {
  if (typeof org !== 'object' || org === null || Array.isArray(org)) return undefined;
  const id = (org as Record<string, unknown>).customerID;
  return checkCustomerID.Check(id) ? id : undefined;
}
