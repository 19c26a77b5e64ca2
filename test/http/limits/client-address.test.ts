import { describe, expect, test } from 'bun:test';
import { AddressLimits, ClientAddresses, notePeer, readerKey } from '../../../src/http/limits/index.ts';

/** Whose request it is: the socket's peer, or what a trusted proxy says in X-Forwarded-For (right-most untrusted). */

function request(peer: string | undefined, forwarded?: string): Request {
  const r = new Request('http://localhost/doi/10.1/x', {
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  });
  notePeer(r, peer);
  return r;
}

describe('ClientAddresses', () => {
  const behindProxies = new ClientAddresses(['10.0.0.0/8', '2001:db8:ffff::/48', '127.0.0.1']);

  test('without trusted proxies, X-Forwarded-For is never believed', () => {
    const none = new ClientAddresses([]);
    expect(none.of(request('198.51.100.7', '203.0.113.9'))).toBe('198.51.100.7');
    expect(none.of(request(undefined))).toBeUndefined();
  });

  test('a peer that is not a trusted proxy is the client, whatever it forwards', () => {
    expect(behindProxies.of(request('198.51.100.7', '203.0.113.9'))).toBe('198.51.100.7');
  });

  test('behind trusted proxies: the right-most address that is not one of them', () => {
    expect(behindProxies.of(request('10.1.2.3', '203.0.113.9'))).toBe('203.0.113.9');
    // the client wrote the left part itself: it is not believed
    expect(behindProxies.of(request('10.1.2.3', '1.1.1.1, 203.0.113.9, 10.9.9.9'))).toBe('203.0.113.9');
    expect(behindProxies.of(request('127.0.0.1', '2001:db8::5, 2001:db8:ffff::1'))).toBe('2001:db8::5');
    // several fields are one list
    const twice = new Request('http://localhost/', {
      headers: [
        ['x-forwarded-for', '1.1.1.1'],
        ['x-forwarded-for', '203.0.113.9'],
      ],
    });
    notePeer(twice, '10.0.0.1');
    expect(behindProxies.of(twice)).toBe('203.0.113.9');
  });

  test('a trusted proxy without X-Forwarded-For, or all hops trusted: the last one read', () => {
    expect(behindProxies.of(request('10.1.2.3'))).toBe('10.1.2.3');
    expect(behindProxies.of(request('10.1.2.3', '10.7.7.7, 10.8.8.8'))).toBe('10.7.7.7');
  });

  test('a hop that is no address stops the reading: the hop right of it stands', () => {
    expect(behindProxies.of(request('10.1.2.3', '203.0.113.9, unknown'))).toBe('10.1.2.3');
    expect(behindProxies.of(request('10.1.2.3', 'garbage, 10.5.5.5'))).toBe('10.5.5.5');
    expect(behindProxies.of(request('10.1.2.3', '203.0.113.9:4711'))).toBe('10.1.2.3');
  });

  test("a dual-stack socket's mapped IPv4 peer is the IPv4 address", () => {
    expect(behindProxies.of(request('::ffff:10.1.2.3', '203.0.113.9'))).toBe('203.0.113.9');
    expect(new ClientAddresses().of(request('::FFFF:198.51.100.7'))).toBe('198.51.100.7');
  });
});

describe('readerKey', () => {
  test('an IPv4 address is its own reader; an IPv6 address is read by its /64', () => {
    expect(readerKey('198.51.100.7')).toBe('198.51.100.7');
    expect(readerKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(readerKey('2001:DB8:1:2::99')).toBe('2001:db8:1:2::/64');
    expect(readerKey('2001:0db8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(readerKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(readerKey('::1')).toBe('0:0:0:0::/64');
    expect(readerKey('1::2:3:4:5:6:7')).toBe('1:0:2:3::/64');
    expect(readerKey('::1.2.3.4')).toBe('0:0:0:0::/64');
  });
});

describe('AddressLimits', () => {
  test('a bucket per reader, on the given clock; IPv6 neighbours of one /64 share one', () => {
    const clock = { t: 0 };
    const limits = new AddressLimits({ perSecond: 1, burst: 2 }, new ClientAddresses(), () => clock.t);
    expect([0, 0, 1000].map(() => limits.admit(request('198.51.100.7')))).toEqual([0, 0, 1000]);
    expect(limits.admit(request('198.51.100.8'))).toBe(0);
    expect(limits.admit(request('2001:db8:1:2::1'))).toBe(0);
    expect(limits.admit(request('2001:db8:1:2::2'))).toBe(0);
    expect(limits.admit(request('2001:db8:1:2::3'))).toBe(1000);
    clock.t += 400;
    expect(limits.admit(request('198.51.100.7'))).toBe(600);
    expect(limits.refused).toBe(3);
  });

  test('memory is bounded: past the bound, the reader seen least recently is forgotten', () => {
    const clock = { t: 0 };
    const limits = new AddressLimits({ perSecond: 0.001, burst: 1 }, new ClientAddresses(), () => clock.t, 3);
    for (const a of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect(limits.admit(request(a))).toBe(0);
    expect(limits.admit(request('192.0.2.1'))).toBeGreaterThan(0); // .1 seen again: now the most recent
    expect(limits.admit(request('192.0.2.4'))).toBe(0); // .2 is forgotten to make room
    expect(limits.size).toBe(3);
    expect(limits.admit(request('192.0.2.1'))).toBeGreaterThan(0); // still remembered
    expect(limits.admit(request('192.0.2.2'))).toBe(0); // forgotten: a full bucket again
    expect(limits.size).toBe(3);
  });
});
