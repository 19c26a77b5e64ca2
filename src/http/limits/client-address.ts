import { BlockList, isIP } from 'node:net';
import { parseAddressBlock } from '../../config/index.ts';

/**
 * Whose request it is, for the limits kept per client address (docs/operations.md, "Rate limits"): the socket's
 * peer, or, when the peer is one of `server.trustedProxies`, the right-most address of X-Forwarded-For that is not
 * a trusted proxy. Everything left of that address was written by the client itself, so none of it is believed.
 */
export class ClientAddresses {
  private readonly trusted = new BlockList();
  private readonly anyTrusted: boolean;

  constructor(trustedProxies: readonly string[] = []) {
    for (const text of trustedProxies) {
      const block = parseAddressBlock(text);
      // the config was checked at load: a block that does not parse here is a bug
      if (!block) throw new Error(`trusted proxy ${JSON.stringify(text)} is not an address or a CIDR block`);
      this.trusted.addSubnet(block.address, block.prefix, block.family);
    }
    this.anyTrusted = trustedProxies.length > 0;
  }

  /** The client's address; undefined for a request that came through no socket (app.handle in-process). */
  of(request: Request): string | undefined {
    const peer = peerOf(request);
    if (peer === undefined || !this.anyTrusted || !this.isTrusted(peer)) return peer;
    const forwarded = request.headers.get('x-forwarded-for'); // several fields arrive joined by ", "
    if (!forwarded) return peer;
    let client = peer;
    const hops = forwarded.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = unmapped(hops[i]!.trim());
      // a hop that is no address: what lies left of it cannot be read, so the last hop read stands
      if (isIP(hop) === 0) break;
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    return this.trusted.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  }
}

const peers = new WeakMap<Request, string>();

/** The socket's peer of a request Bun's server took (server.ts): noted there, as Elysia's handlers see no socket. */
export function notePeer(request: Request, address: string | undefined): void {
  if (address !== undefined) peers.set(request, unmapped(address));
}

function peerOf(request: Request): string | undefined {
  return peers.get(request);
}

/** An IPv4 address as itself: a dual-stack socket names it `::ffff:192.0.2.1` */
function unmapped(address: string): string {
  return address.length > 7 && address.slice(0, 7).toLowerCase() === '::ffff:' && isIP(address.slice(7)) === 4
    ? address.slice(7)
    : address;
}

/**
 * What one reader is limited as: an IPv4 address itself, an IPv6 address by its /64, which a single host is
 * commonly given whole (counting its addresses one by one would give it 2^64 buckets).
 */
export function readerKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap(hexGroups));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all =
    tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${all.slice(0, 4).join(':')}::/64`;
}

/** One group of an IPv6 address in its shortest hex, or an embedded IPv4 address as the two groups it stands for. */
function hexGroups(group: string): string[] {
  if (!group.includes('.')) return [Number.parseInt(group, 16).toString(16)];
  const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
