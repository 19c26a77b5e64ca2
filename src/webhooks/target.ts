import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { discardBounded } from '../base/index.ts';

/**
 * Where a delivery may go (docs/interface.md, "Push alerts"): `https://` only, and never to a private, loopback,
 * link-local, unique-local or metadata address, unless the operator's config allows it (tests do). The address
 * is checked after DNS resolution, at each delivery, and the request goes to that checked address (the name
 * kept in the Host header, and as the TLS server name), so a DNS answer that changes between the check and the
 * connection (rebinding) cannot send it elsewhere. No redirect is followed; time and response size are bounded.
 */

export interface TargetRules {
  allowHttp: boolean;
  allowPrivateTargets: boolean;
  /** a name's addresses; the system resolver unless a test gives its own (one that never answers, or rebinds) */
  resolve?: Resolver;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Why a target URL is refused, after resolving its name (at creation): the name's addresses are checked as a
 * delivery checks them, so a name of a private or loopback address is refused up front, not at each delivery.
 * A name that does not resolve within `timeoutMs` is refused too: every delivery to it would fail.
 */
export async function targetProblem(
  text: string,
  rules: TargetRules & { timeoutMs: number },
): Promise<string | undefined> {
  const problem = urlProblem(text, rules);
  if (problem || rules.allowPrivateTargets) return problem;
  const url = new URL(text);
  if (isIP(hostOf(url))) return undefined; // checked by urlProblem
  const resolved = await resolveTarget(url, rules, AbortSignal.timeout(rules.timeoutMs));
  if ('timedOut' in resolved) return `url: ${hostOf(url)} did not resolve within ${rules.timeoutMs} ms`;
  return 'refused' in resolved ? `url: ${resolved.refused}` : undefined;
}

/** Why a target URL is refused, in words an integrator can act on; undefined when it may be used. */
export function urlProblem(text: string, rules: TargetRules): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `url: ${JSON.stringify(text)} is not an absolute URL`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp))
    return `url: the scheme must be https (got ${url.protocol.slice(0, -1)})`;
  if (url.username || url.password) return 'url: credentials in the URL are not taken; check the signature instead';
  if (url.hash) return 'url: a fragment (#...) is never sent; leave it out';
  const host = hostOf(url);
  if (isIP(host) && !rules.allowPrivateTargets) {
    const range = refusedRange(host);
    if (range) return `url: ${host} is a ${range} address, which deliveries never go to`;
  }
  return undefined;
}

/** The URL's host without the brackets of an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The name of the range an address is in when deliveries may not go there, else undefined. */
export function refusedRange(address: string): string | undefined {
  const v = isIP(address);
  if (v === 4) return refusedV4(address.split('.').map(Number));
  if (v === 6) return refusedV6(address);
  return 'unparsable';
}

function refusedV4([a, b, c]: number[]): string | undefined {
  if (a === undefined || b === undefined) return 'unparsable';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local (the cloud metadata service among them)';
  if (a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b < 128) return 'shared (carrier-grade NAT)';
  if (a === 0) return 'this-network';
  if (a === 192 && b === 0 && c === 0) return 'IETF protocol assignment';
  if (a === 198 && (b === 18 || b === 19)) return 'benchmarking';
  if (a >= 224) return 'multicast or reserved';
  return undefined;
}

/** An IPv6 address as its eight 16-bit groups. */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  // an embedded IPv4 tail (::ffff:10.0.0.1) as two groups
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
}

function refusedV6(address: string): string | undefined {
  const g = groupsOf(address);
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(7) && g[7] === 1) return 'loopback';
  if (zeroTo(8)) return 'unspecified';
  const v4 = (hi: number, lo: number) => refusedV4([hi >> 8, hi & 255, lo >> 8]);
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible and IPv4-translated (::ffff:0:a.b.c.d): the IPv4 address decides
  if (zeroTo(5) && (g[5] === 0xffff || g[5] === 0)) return v4(g[6]!, g[7]!);
  if (zeroTo(4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  // 6to4 (2002:a.b.c.d::/48) is routed to the IPv4 address in its second and third groups
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique-local (private)';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0xfd00 && g[1] === 0xec2) return 'metadata';
  // NAT64 (64:ff9b::a.b.c.d) reaches the IPv4 address in its tail
  if (g[0] === 0x64 && g[1] === 0xff9b) return v4(g[6]!, g[7]!);
  // Teredo (2001:0::/32) carries its server's IPv4 address in the second and third groups and its client's, every
  // bit inverted, in the last two: it is routed to both
  if (g[0] === 0x2001 && g[1] === 0) return v4(g[2]!, g[3]!) ?? v4(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  return undefined;
}

/**
 * The address a delivery connects to: resolved now, every answer checked; or why none may be used. The lookup
 * races `signal`, the attempt's time-out: a resolver that does not answer is no answer within the time-out.
 */
export async function resolveTarget(
  url: URL,
  rules: TargetRules,
  signal: AbortSignal,
): Promise<{ address: string; family: number } | { refused: string } | { timedOut: true }> {
  const host = hostOf(url);
  let answers: { address: string; family: number }[];
  if (isIP(host)) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await Promise.race([(rules.resolve ?? systemResolve)(host), aborted(signal)]);
    } catch (e) {
      if (signal.aborted) return { timedOut: true };
      return { refused: `${host} does not resolve: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
    }
  }
  if (answers.length === 0) return { refused: `${host} does not resolve` };
  if (!rules.allowPrivateTargets)
    // every answer: a name that also points inward is refused, whichever answer a client would pick
    for (const a of answers) {
      const range = refusedRange(a.address);
      if (range)
        return { refused: `${host} resolves to ${a.address}, a ${range} address, which deliveries never go to` };
    }
  return answers[0]!;
}

/** Rejects when `signal` aborts (never resolves). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * What an attempt came to, as a stable code: the attempt record's `outcome` and the metric's label. `not_kept`: the
 * event is no longer stored, so it was passed over unsent.
 */
export type DeliveryOutcome =
  | 'delivered'
  | 'http_error'
  | 'timeout'
  | 'connection_failed'
  | 'refused'
  | 'redirect'
  | 'not_kept';

/** What one delivery attempt came to. */
export interface SendOutcome {
  kind: DeliveryOutcome;
  ok: boolean;
  /** the HTTP status, or 0 when none came (refused, time-out, connection failure) */
  status: number;
  /** why it failed, in words */
  error?: string;
  ms: number;
}

/** Bytes of a receiver's answer read at most: what a receiver says is not used, only its status. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** POSTs `body` to `target` at its checked address: 2xx is success; a 3xx, another status or a time-out is not. */
export async function send(
  target: string,
  headers: Record<string, string>,
  body: string,
  opts: TargetRules & { timeoutMs: number; ca?: string },
): Promise<SendOutcome> {
  const startedAt = performance.now();
  const done = (kind: DeliveryOutcome, status: number, error?: string): SendOutcome => ({
    kind,
    ok: kind === 'delivered',
    status,
    error,
    ms: Math.round(performance.now() - startedAt),
  });
  const url = new URL(target);
  // made before the lookup: the name's resolution is inside the attempt's time-out, not before it
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const resolved = await resolveTarget(url, opts, signal);
  if ('timedOut' in resolved) return done('timeout', 0, `no answer within ${opts.timeoutMs} ms`);
  if ('refused' in resolved) return done('refused', 0, `refused: ${resolved.refused}`);
  const pinned = new URL(url);
  pinned.hostname = resolved.family === 6 ? `[${resolved.address}]` : resolved.address;
  try {
    const r = await fetch(pinned, {
      method: 'POST',
      headers: {
        ...headers,
        host: url.host,
        'content-type': 'application/json',
        'user-agent': 'doi-holdings-webhooks',
      },
      body,
      redirect: 'manual',
      signal,
      // the certificate is checked against the name, not the address connected to
      tls: url.protocol === 'https:' ? { serverName: hostOf(url), ...(opts.ca ? { ca: opts.ca } : {}) } : undefined,
    } as RequestInit);
    await discardBounded(r, MAX_RESPONSE_BYTES);
    if (r.status >= 300 && r.status < 400)
      return done('redirect', r.status, `redirect to ${r.headers.get('location') ?? '(no location)'} not followed`);
    if (r.status >= 200 && r.status < 300) return done('delivered', r.status);
    return done('http_error', r.status, `the receiver answered ${r.status}`);
  } catch (e) {
    const name = (e as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return done('timeout', 0, `no answer within ${opts.timeoutMs} ms`);
    return done('connection_failed', 0, `connection failed: ${(e as Error).message}`);
  }
}
