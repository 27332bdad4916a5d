import { describe, expect, it } from 'vitest';
import { AllowList, formatAddress, parseAddress, pickTunnelAddress, refusedKind, unmapped } from './addresses.js';

const parsed = (text: string): NonNullable<ReturnType<typeof parseAddress>> => {
  const a = parseAddress(text);
  if (a === null) throw new Error(`not parsed: ${text}`);
  return a;
};

describe('parseAddress', () => {
  it('reads IPv4, IPv6 with :: anywhere, an IPv4 tail and a zone id, and nothing else', () => {
    expect(Array.from(parsed('192.168.1.20').bytes)).toEqual([192, 168, 1, 20]);
    expect(formatAddress(parsed('::1'))).toBe('::1');
    expect(formatAddress(parsed('::'))).toBe('::');
    expect(formatAddress(parsed('2001:DB8:0:0:1::'))).toBe('2001:db8:0:0:1::');
    expect(formatAddress(parsed('::ffff:127.0.0.1'))).toBe('::ffff:7f00:1');
    expect(formatAddress(parsed('::127.0.0.1'))).toBe('::7f00:1');
    expect(formatAddress(parsed('1:2:3:4:5:6:7.8.9.10'))).toBe('1:2:3:4:5:6:708:90a');
    expect(formatAddress(parsed('fe80::1%eth0'))).toBe('fe80::1');
    for (const bad of ['localhost', '127.1', '2130706433', '1:2:3:4:5:6:7:8:9', '', '[::1]']) expect(parseAddress(bad)).toBeNull();
  });
});

describe('refusedKind', () => {
  it('refuses loopback, unspecified, link-local, private, shared, multicast, broadcast and reserved IPv4', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'a loopback address'],
      ['127.255.0.9', 'a loopback address'],
      ['0.0.0.0', 'an unspecified address'],
      ['0.1.2.3', 'a "this network" address'],
      ['169.254.169.254', 'a link-local address'],
      ['10.1.2.3', 'a private address'],
      ['172.16.0.1', 'a private address'],
      ['172.31.255.255', 'a private address'],
      ['192.168.0.1', 'a private address'],
      ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
      ['100.127.255.255', 'a shared (carrier-grade NAT) address'],
      ['224.0.0.1', 'a multicast address'],
      ['239.255.255.250', 'a multicast address'],
      ['255.255.255.255', 'the broadcast address'],
      ['240.0.0.1', 'a reserved address'],
      ['192.0.0.170', 'a reserved address'],
      ['192.0.2.1', 'a documentation address'],
      ['198.18.0.1', 'a benchmarking address'],
    ];
    for (const [address, kind] of cases) expect([address, refusedKind(address)]).toEqual([address, kind]);
  });

  it('passes public IPv4, including the neighbours of the refused ranges', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '11.0.0.0', '126.255.255.255', '128.0.0.0', '192.169.0.0', '223.255.255.255']) {
      expect([address, refusedKind(address)]).toEqual([address, null]);
    }
  });

  it('refuses IPv6 loopback, unspecified, link-local, unique local, multicast and everything outside global unicast', () => {
    const cases: [string, string][] = [
      ['::1', 'a loopback address'],
      ['::', 'an unspecified address'],
      ['fe80::1', 'a link-local address'],
      ['fe80::1%lo', 'a link-local address'],
      ['febf::1', 'a link-local address'],
      ['fec0::1', 'a site-local address'],
      ['fc00::1', 'a private (unique local) address'],
      ['fd12:3456::1', 'a private (unique local) address'],
      ['ff02::1', 'a multicast address'],
      ['2001:db8::1', 'a documentation address'],
      ['2001::1', 'a reserved address (Teredo, benchmarking, ORCHID)'],
      ['64:ff9b:1::a', 'a local-use NAT64 address'],
      ['::127.0.0.1', 'not a global unicast address'],
      ['4000::1', 'not a global unicast address'],
    ];
    for (const [address, kind] of cases) expect([address, refusedKind(address)]).toEqual([address, kind]);
    expect(refusedKind('2606:4700:4700::1111')).toBeNull();
    expect(refusedKind('2a00:1450:4001::200e')).toBeNull();
  });

  it('judges an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) by that IPv4 address', () => {
    expect(refusedKind('::ffff:127.0.0.1')).toBe('a loopback address (127.0.0.1, inside an IPv6 address)');
    expect(refusedKind('::ffff:7f00:1')).toBe('a loopback address (127.0.0.1, inside an IPv6 address)');
    expect(refusedKind('::ffff:169.254.169.254')).toBe('a link-local address (169.254.169.254, inside an IPv6 address)');
    expect(refusedKind('64:ff9b::10.0.0.1')).toBe('a private address (10.0.0.1, inside an IPv6 address)');
    expect(refusedKind('64:ff9b::a9fe:a9fe')).toBe('a link-local address (169.254.169.254, inside an IPv6 address)');
    expect(refusedKind('2002:c0a8:0101::1')).toBe('a private address (192.168.1.1, inside an IPv6 address)');
    expect(refusedKind('2002:7f00:1::')).toBe('a loopback address (127.0.0.1, inside an IPv6 address)');
    expect(refusedKind('::ffff:8.8.8.8')).toBeNull();
    expect(refusedKind('64:ff9b::8.8.8.8')).toBeNull();
    expect(refusedKind('2002:0808:0808::1')).toBeNull();
  });

  it('is a TypeError for a name', () => {
    expect(() => refusedKind('localhost')).toThrow(TypeError);
  });
});

describe('AllowList', () => {
  it('matches an address or a block, on one port or every port, an IPv4-mapped address as its IPv4 one', () => {
    const list = new AllowList([{ address: '127.0.0.1', port: 4440 }, { address: '10.0.0.0/8' }, { address: '::1', port: 4440 }]);
    expect(list.allows(parsed('127.0.0.1'), 4440)).toBe(true);
    expect(list.allows(parsed('127.0.0.1'), 4441)).toBe(false);
    expect(list.allows(parsed('127.0.0.2'), 4440)).toBe(false);
    expect(list.allows(unmapped(parsed('::ffff:127.0.0.1')), 4440)).toBe(true);
    expect(list.allows(parsed('10.9.8.7'), 22)).toBe(true);
    expect(list.allows(parsed('11.0.0.1'), 22)).toBe(false);
    expect(list.allows(parsed('::1'), 4440)).toBe(true);
    expect(list.allows(parsed('::1'), 22)).toBe(false);
    expect(new AllowList([{ address: '::ffff:127.0.0.1', port: 1 }]).allows(parsed('127.0.0.1'), 1)).toBe(true);
  });

  it('refuses a name, a bad block or a bad port as a TypeError', () => {
    expect(() => new AllowList([{ address: 'localhost' }])).toThrow(TypeError);
    expect(() => new AllowList([{ address: '10.0.0.0/33' }])).toThrow(TypeError);
    expect(() => new AllowList([{ address: '10.0.0.0/x' }])).toThrow(TypeError);
    expect(() => new AllowList([{ address: '10.0.0.1', port: 0 }])).toThrow(TypeError);
  });
});

describe('pickTunnelAddress', () => {
  const own = new AllowList([{ address: '127.0.0.1', port: 4440 }]);
  const none = new AllowList([]);
  const picked = (c: ReturnType<typeof pickTunnelAddress>): string => (c.ok ? formatAddress(c.address) : `${c.code} ${c.address}: ${c.kind ?? ''}`);

  it("lets the world's token reach a public address, and the read token only the world's own server", () => {
    expect(picked(pickTunnelAddress(['93.184.215.14'], 443, 'write', own, none))).toBe('93.184.215.14');
    expect(picked(pickTunnelAddress(['2606:2800:21f:cb07:6820:80da:af6b:8b2c'], 443, 'write', own, none))).toBe('2606:2800:21f:cb07:6820:80da:af6b:8b2c');
    expect(picked(pickTunnelAddress(['93.184.215.14'], 443, 'read', own, none))).toBe('forbidden 93.184.215.14: ');
    for (const scope of ['read', 'write'] as const) {
      expect(picked(pickTunnelAddress(['127.0.0.1'], 4440, scope, own, none))).toBe('127.0.0.1');
      expect(picked(pickTunnelAddress(['::ffff:127.0.0.1'], 4440, scope, own, none))).toBe('127.0.0.1');
    }
    expect(picked(pickTunnelAddress(['127.0.0.1'], 4441, 'write', own, none))).toBe('tunnel_refused 127.0.0.1: a loopback address');
  });

  it('skips the addresses a credential may not reach and picks the first it may, in the resolver order', () => {
    expect(picked(pickTunnelAddress(['10.0.0.1', '::1', '93.184.215.14', '1.1.1.1'], 443, 'write', own, none))).toBe('93.184.215.14');
    // localhost resolving to ::1 first, with the world's server on 127.0.0.1.
    expect(picked(pickTunnelAddress(['::1', '127.0.0.1'], 4440, 'read', own, none))).toBe('127.0.0.1');
    expect(picked(pickTunnelAddress(['169.254.169.254', 'fd00::1'], 80, 'write', own, none))).toBe('tunnel_refused 169.254.169.254: a link-local address');
    expect(picked(pickTunnelAddress([], 80, 'write', own, none))).toBe('tunnel_refused : no address');
  });

  it("widens the world's token's reach by the allowances, never the read token's", () => {
    const allow = new AllowList([{ address: '10.0.0.0/8', port: 5432 }]);
    expect(picked(pickTunnelAddress(['10.1.2.3'], 5432, 'write', own, allow))).toBe('10.1.2.3');
    expect(picked(pickTunnelAddress(['10.1.2.3'], 22, 'write', own, allow))).toBe('tunnel_refused 10.1.2.3: a private address');
    expect(picked(pickTunnelAddress(['10.1.2.3'], 5432, 'read', own, allow))).toBe('forbidden 10.1.2.3: a private address');
  });
});
