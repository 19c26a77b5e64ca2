import { isIPv4, isIPv6 } from 'node:net';
import type { Org } from './schema.ts';

/** The org fields a platform decides by, in the order they are sent and make up the cache identity. */
const USED = ['ipv4', 'ipv6', 'entityID', 'openAthensOrgID', 'eduPersonScopedAffiliation'] as const;

/** What the schema cannot say of an org: addresses that parse, fields that need entityID. The path and why, or undefined. */
export function orgProblem(org: Org): string | undefined {
  if (org.ipv4 !== undefined && !isIPv4(org.ipv4))
    return `/org/ipv4: ${JSON.stringify(org.ipv4)} is not an IPv4 address (dotted quad, e.g. 192.0.2.10)`;
  // node takes a zone (fe80::1%eth0), which names an interface of the sender: never part of a reader's address
  if (org.ipv6 !== undefined && (!isIPv6(org.ipv6) || org.ipv6.includes('%')))
    return `/org/ipv6: ${JSON.stringify(org.ipv6)} is not an IPv6 address`;
  for (const field of ['openAthensOrgID', 'eduPersonScopedAffiliation'] as const)
    if (org[field] !== undefined && org.entityID === undefined)
      return `/org/${field}: given only with /org/entityID (the identity provider it belongs to)`;
  return undefined;
}

/** The org as platforms are sent it and answers show it: the used fields only, in one order. */
export function usedOrg(org: Org | undefined): Org {
  const out: Org = {};
  if (org) for (const f of USED) if (org[f] !== undefined) out[f] = org[f];
  return out;
}

/**
 * One string per distinct used org: part of a cached answer's key (two integrators asking for one org share it).
 * Each field is given with its length (absent: "-"), so no character in a value can make it read as two fields;
 * cheaper than JSON.stringify, and this is on every request that asks a platform. An org of long fields (up to
 * 2.3 KB) is its SHA-256 instead, `#`-marked (an identity otherwise starts with `-` or a digit): every cached
 * answer holds its key, and 100,000 of such keys took 250 MB.
 */
export function orgIdentity(org: Org): string {
  let out = '';
  for (const f of USED) {
    const v = org[f];
    out += v === undefined ? '-' : `${v.length}:${v}`;
  }
  return out.length <= MAX_PLAIN_IDENTITY ? out : `#${new Bun.CryptoHasher('sha256').update(out).digest('base64')}`;
}
/** an IPv6 address and a short entity ID or so: longer ones are digested */
const MAX_PLAIN_IDENTITY = 96;
