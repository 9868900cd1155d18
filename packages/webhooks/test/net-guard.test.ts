import { describe, expect, it } from 'vitest';
import { CidrError, isBlockedAddress, parseCidrList } from '../src/net-guard';

describe('isBlockedAddress', () => {
  it.each<[string, string]>([
    ['127.0.0.1', 'loopback address 127.0.0.1'],
    ['127.255.255.254', 'loopback address 127.255.255.254'],
    ['0.0.0.0', 'unspecified address 0.0.0.0'],
    ['0.1.2.3', 'unspecified address 0.1.2.3'],
    ['10.1.2.3', 'private address 10.1.2.3'],
    ['172.16.0.1', 'private address 172.16.0.1'],
    ['172.31.255.255', 'private address 172.31.255.255'],
    ['192.168.1.1', 'private address 192.168.1.1'],
    ['169.254.169.254', 'metadata address 169.254.169.254'],
    ['169.254.0.1', 'link-local address 169.254.0.1'],
    ['100.64.0.1', 'carrier-grade NAT address 100.64.0.1'],
    ['100.100.100.200', 'carrier-grade NAT address 100.100.100.200'],
    ['100.127.255.255', 'carrier-grade NAT address 100.127.255.255'],
    ['224.0.0.1', 'multicast address 224.0.0.1'],
    ['239.255.255.250', 'multicast address 239.255.255.250'],
    ['255.255.255.255', 'broadcast address 255.255.255.255'],
    ['240.0.0.1', 'reserved address 240.0.0.1'],
    ['192.0.0.8', 'reserved (IETF protocol) address 192.0.0.8'],
    ['198.18.0.1', 'benchmarking address 198.18.0.1'],
    ['198.19.255.255', 'benchmarking address 198.19.255.255'],
    ['192.0.2.1', 'documentation address 192.0.2.1'],
    ['203.0.113.7', 'documentation address 203.0.113.7'],
    ['::1', 'loopback address ::1'],
    ['0:0:0:0:0:0:0:1', 'loopback address 0:0:0:0:0:0:0:1'],
    ['::', 'unspecified address ::'],
    ['fc00::1', 'private address fc00::1'],
    ['fd12:3456:789a::1', 'private address fd12:3456:789a::1'],
    ['fe80::1', 'link-local address fe80::1'],
    ['febf::1', 'link-local address febf::1'],
    ['fe80::1%eth0', 'link-local address fe80::1'],
    ['ff02::1', 'multicast address ff02::1'],
    ['2001:db8::1', 'documentation address 2001:db8::1'],
    ['2001:DB8:0:0:0:0:0:FF', 'documentation address 2001:DB8:0:0:0:0:0:FF'],
    ['fd00:ec2::254', 'metadata address fd00:ec2::254'],
    ['[::1]', 'loopback address ::1'],
    // IPv6 forms that reach an IPv4 address
    ['::ffff:127.0.0.1', 'loopback address 127.0.0.1 (as ::ffff:127.0.0.1)'],
    ['::ffff:7f00:1', 'loopback address 127.0.0.1 (as ::ffff:7f00:1)'],
    ['::FFFF:10.0.0.1', 'private address 10.0.0.1 (as ::FFFF:10.0.0.1)'],
    ['::ffff:169.254.169.254', 'metadata address 169.254.169.254 (as ::ffff:169.254.169.254)'],
    ['64:ff9b::7f00:1', 'loopback address 127.0.0.1 (as 64:ff9b::7f00:1)'],
    ['64:ff9b::192.168.0.1', 'private address 192.168.0.1 (as 64:ff9b::192.168.0.1)'],
    ['::127.0.0.1', 'loopback address 127.0.0.1 (as ::127.0.0.1)'],
    ['::ffff:0:a01:203', 'private address 10.1.2.3 (as ::ffff:0:a01:203)'],
    ['2002:a9fe:a9fe::1', 'metadata address 169.254.169.254 (as 2002:a9fe:a9fe::1)'],
  ])('blocks %s', (ip, reason) => {
    expect(isBlockedAddress(ip, [])).toEqual({ blocked: true, reason });
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '192.167.255.255',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows public %s', (ip) => {
    expect(isBlockedAddress(ip, [])).toEqual({ blocked: false });
  });

  it.each(['localhost', 'example.com', '', '1.2.3', '256.1.1.1', '0127.0.0.1', '127.1', '2130706433', ':::1', '1.2.3.4/32'])(
    'blocks text that is not an IP address: %j',
    (text) => {
      const result = isBlockedAddress(text, []);
      expect(result.blocked).toBe(true);
      expect(result.reason).toMatch(/^not an IP address/);
    },
  );

  it('lets an allowed CIDR through', () => {
    const allow = parseCidrList('127.0.0.1/32, 10.0.0.0/8 fd00::/8');
    expect(isBlockedAddress('127.0.0.1', allow)).toEqual({ blocked: false });
    expect(isBlockedAddress('127.0.0.2', allow).blocked).toBe(true);
    expect(isBlockedAddress('10.200.1.1', allow)).toEqual({ blocked: false });
    expect(isBlockedAddress('fd12::1', allow)).toEqual({ blocked: false });
    expect(isBlockedAddress('fc00::1', allow).blocked).toBe(true);
    expect(isBlockedAddress('192.168.0.1', allow).blocked).toBe(true);
    expect(isBlockedAddress('::1', allow).blocked).toBe(true);
  });

  it('applies an allowed IPv4 CIDR to the IPv6 forms of the address', () => {
    const allow = parseCidrList('127.0.0.0/8');
    expect(isBlockedAddress('::ffff:127.0.0.1', allow)).toEqual({ blocked: false });
    expect(isBlockedAddress('64:ff9b::7f00:1', allow)).toEqual({ blocked: false });
    expect(isBlockedAddress('::ffff:10.0.0.1', allow).blocked).toBe(true);
  });

  it('allows everything with 0.0.0.0/0 and ::/0', () => {
    const allow = parseCidrList('0.0.0.0/0 ::/0');
    for (const ip of ['127.0.0.1', '169.254.169.254', '::1', 'fe80::1', '10.0.0.1']) {
      expect(isBlockedAddress(ip, allow)).toEqual({ blocked: false });
    }
  });

  it('does not confuse families', () => {
    // ::/96 would contain 0.0.0.x if families were mixed.
    const allow = parseCidrList('::/96');
    expect(isBlockedAddress('127.0.0.1', allow).blocked).toBe(true);
  });
});

describe('isBlockedAddress: families stay apart (net.BlockList alone would mix them)', () => {
  it('never lets an IPv6 allow entry admit an IPv4 address', () => {
    for (const entry of ['::ffff:0:0/96', '::ffff:7f00:0/104', '::/0']) {
      expect(isBlockedAddress('127.0.0.1', parseCidrList(entry))).toEqual({ blocked: true, reason: 'loopback address 127.0.0.1' });
    }
  });

  it('names the embedded IPv4 address, not the IPv6 form, in the reason', () => {
    expect(isBlockedAddress('::ffff:127.0.0.1', [])).toEqual({ blocked: true, reason: 'loopback address 127.0.0.1 (as ::ffff:127.0.0.1)' });
  });

  it('applies an IPv4 allow entry to every IPv6 form that embeds the address', () => {
    const allow = parseCidrList('169.254.169.254/32');
    for (const ip of ['::ffff:169.254.169.254', '::ffff:0:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '::169.254.169.254', '2002:a9fe:a9fe::1']) {
      expect(isBlockedAddress(ip, allow)).toEqual({ blocked: false });
    }
  });
});

describe('parseCidrList', () => {
  it('parses CIDRs and single addresses separated by commas and/or whitespace', () => {
    const list = parseCidrList(' 127.0.0.1/32,10.0.0.0/8 ,\n 192.168.1.5\t::1  fe80::/10, [2001:db8::1]/64 ');
    expect(list.map((c) => c.text)).toEqual(['127.0.0.1/32', '10.0.0.0/8', '192.168.1.5/32', '::1/128', 'fe80::/10', '2001:db8::/64']);
    expect(list[1]).toEqual({ family: 4, network: 0x0a000000n, prefix: 8, text: '10.0.0.0/8' });
    expect(list[3]).toMatchObject({ family: 6, network: 1n, prefix: 128 });
  });

  it('clears host bits', () => {
    expect(parseCidrList('10.1.2.3/8')[0]?.text).toBe('10.0.0.0/8');
    expect(parseCidrList('fe80::1:2/64')[0]?.text).toBe('fe80::/64');
    expect(parseCidrList('1.2.3.4/0')[0]?.text).toBe('0.0.0.0/0');
  });

  it('returns an empty list for empty text', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList(' , ,\n')).toEqual([]);
  });

  it.each([
    ['nope', 'nope'],
    ['10.0.0.0/8, example.com', 'example.com'],
    ['1.2.3.4/33', '1.2.3.4/33'],
    ['::1/129', '::1/129'],
    ['1.2.3.4/', '1.2.3.4/'],
    ['1.2.3.4/-1', '1.2.3.4/-1'],
    ['1.2.3.4/8.0', '1.2.3.4/8.0'],
    ['1.2.3/24', '1.2.3/24'],
    ['300.1.1.1', '300.1.1.1'],
    ['/8', '/8'],
  ])('names the bad entry in %j', (text, entry) => {
    let caught: unknown;
    try {
      parseCidrList(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CidrError);
    expect((caught as CidrError).entry).toBe(entry);
    expect((caught as Error).message).toBe(`invalid CIDR or IP address "${entry}"`);
  });
});
