/**
 * Which addresses a webhook may reach: everything public, nothing internal (loopback, private, link-local
 * incl. cloud metadata, CGNAT, multicast, reserved, documentation, and the IPv6 forms that embed such an
 * IPv4 address), except what an operator explicitly allows with CIDRs.
 *
 * Ranges are matched by Node's `net.BlockList`. Addresses are parsed here only to give a `Cidr` its network
 * number and canonical text, and to take the IPv4 address out of the IPv6 forms that carry one.
 */
import { BlockList, isIP, SocketAddress } from 'node:net';

export interface Cidr {
  family: 4 | 6;
  /** The network address (host bits cleared) as an unsigned integer of 32 or 128 bits. */
  network: bigint;
  prefix: number;
  /** Canonical text, e.g. `10.0.0.0/8`. */
  text: string;
}

export class CidrError extends Error {
  constructor(readonly entry: string) {
    super(`invalid CIDR or IP address "${entry}"`);
    this.name = 'CidrError';
  }
}

export interface BlockCheck {
  blocked: boolean;
  reason?: string;
}

type Family = 4 | 6;

interface Address {
  family: Family;
  /** The address as an unsigned integer of 32 or 128 bits. */
  value: bigint;
  /** Canonical text. */
  text: string;
  /** What `BlockList.check` takes; made once so each check does not parse the text again. */
  socket: SocketAddress;
}

const FAMILY_BITS = { 4: 32, 6: 128 } as const;
/** `BlockList`'s name for each family. */
const ADDRESS_TYPE = { 4: 'ipv4', 6: 'ipv6' } as const;

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

/** An IPv6 address already validated by `isIP` (no brackets, no zone) as a 128-bit integer. */
function ipv6Value(text: string): bigint | undefined {
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // A trailing dotted IPv4 (::ffff:1.2.3.4) stands for the last two groups.
    const v4 = ipv4Value(text.slice(lastColon + 1));
    head = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = right === undefined ? leftGroups : [...leftGroups, ...Array<string>(missing).fill('0'), ...rightGroups];
  if (groups.length !== 8) return undefined;
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function formatAddress(family: Family, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16));
  // The WHATWG URL serialiser writes IPv6 hosts the RFC 5952 way (lower case, the first longest run of zero groups as "::").
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

function makeAddress(family: Family, value: bigint): Address {
  const text = formatAddress(family, value);
  return { family, value, text, socket: new SocketAddress({ address: text, family: ADDRESS_TYPE[family] }) };
}

/** Parses a textual IP (no brackets, no zone); undefined for anything `isIP` rejects. */
function parseAddress(text: string): Address | undefined {
  const family = isIP(text);
  if (family !== 4 && family !== 6) return undefined;
  const value = family === 4 ? ipv4Value(text) : ipv6Value(text);
  return value === undefined ? undefined : makeAddress(family, value);
}

function stripHost(ip: string): string {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0 && s.includes(':')) s = s.slice(0, zone); // fe80::1%eth0
  return s;
}

function parseCidr(entry: string): Cidr {
  const slash = entry.indexOf('/');
  const address = parseAddress(stripHost(slash >= 0 ? entry.slice(0, slash) : entry));
  if (!address) throw new CidrError(entry);
  const bits = FAMILY_BITS[address.family];
  let prefix: number = bits;
  if (slash >= 0) {
    const p = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > bits) throw new CidrError(entry);
    prefix = Number(p);
  }
  const hostBits = BigInt(bits - prefix);
  const network = (address.value >> hostBits) << hostBits;
  return { family: address.family, network, prefix, text: `${formatAddress(address.family, network)}/${prefix}` };
}

/** Parses a comma- and/or whitespace-separated list of CIDRs or single addresses; throws `CidrError` naming a bad entry. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .map(parseCidr);
}

/**
 * A set of CIDRs, matched by `BlockList` with one list per family. A single `BlockList` would also match IPv4
 * rules against IPv4-mapped IPv6 addresses and rules like `::ffff:0:0/96` or `::/0` against IPv4 addresses:
 * an IPv6 allow entry would then let IPv4 addresses through, and a block reason would name the IPv6 form.
 * IPv4 addresses inside IPv6 ones are taken out by `embeddedIPv4` and checked on their own instead.
 */
class CidrSet {
  private readonly lists = { 4: new BlockList(), 6: new BlockList() };

  constructor(cidrs: Iterable<Cidr>) {
    for (const c of cidrs) this.lists[c.family].addSubnet(formatAddress(c.family, c.network), c.prefix, ADDRESS_TYPE[c.family]);
  }

  has(address: Address): boolean {
    return this.lists[address.family].check(address.socket);
  }
}

/** Blocked ranges by the reason given for them; the first match names the reason, so more specific ranges come first. */
const BLOCKED: ReadonlyArray<readonly [reason: string, set: CidrSet]> = (
  [
    ['metadata address', ['169.254.169.254/32', 'fd00:ec2::254/128']],
    ['broadcast address', ['255.255.255.255/32']],
    ['unspecified address', ['0.0.0.0/8', '::/128']],
    ['private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
    ['carrier-grade NAT address', ['100.64.0.0/10']],
    ['loopback address', ['127.0.0.0/8', '::1/128']],
    ['link-local address', ['169.254.0.0/16', 'fe80::/10']],
    ['reserved (IETF protocol) address', ['192.0.0.0/24']],
    ['documentation address', ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32']],
    ['benchmarking address', ['198.18.0.0/15']],
    ['multicast address', ['224.0.0.0/4', 'ff00::/8']],
    ['reserved address', ['240.0.0.0/4']],
    ['reserved (local translation) address', ['64:ff9b:1::/48']],
    ['reserved (discard) address', ['100::/64']],
    ['private (site-local) address', ['fec0::/10']],
  ] as const
).map(([reason, ranges]) => [reason, new CidrSet(ranges.map(parseCidr))] as const);

/** IPv6 forms that carry an IPv4 address a packet may end up at, by where that address sits in them. */
const IPV4_IN_LOW_32_BITS = new CidrSet(
  [
    '::ffff:0:0/96', // IPv4-mapped
    '::ffff:0:0:0/96', // IPv4-translated (SIIT)
    '64:ff9b::/96', // NAT64 well-known prefix
    '::/96', // IPv4-compatible (deprecated); :: and ::1 are not, see `embeddedIPv4`
  ].map(parseCidr),
);
const IPV4_AFTER_16_BITS = new CidrSet([parseCidr('2002::/16')]); // 6to4

function embeddedIPv4(a: Address): Address | undefined {
  if (a.family !== 6 || a.value <= 1n) return undefined; // :: and ::1 are the unspecified and loopback addresses
  if (IPV4_IN_LOW_32_BITS.has(a)) return makeAddress(4, a.value & 0xffffffffn);
  if (IPV4_AFTER_16_BITS.has(a)) return makeAddress(4, (a.value >> 80n) & 0xffffffffn);
  return undefined;
}

function blockedReason(a: Address): string | undefined {
  return BLOCKED.find(([, set]) => set.has(a))?.[0];
}

/** An allow list's matcher and the verdicts given under it, by the list's text (a change to a reused array is a new key). */
interface Verdicts {
  allowed: CidrSet;
  checked: Map<string, BlockCheck>;
}

const verdictsByList = new Map<string, Verdicts>();
const MAX_LISTS = 64;
const MAX_VERDICTS = 4096;

function verdictsFor(allow: readonly Cidr[]): Verdicts {
  const key = allow.map((c) => c.text).join(',');
  let verdicts = verdictsByList.get(key);
  if (!verdicts) {
    if (verdictsByList.size >= MAX_LISTS) verdictsByList.clear();
    verdictsByList.set(key, (verdicts = { allowed: new CidrSet(allow), checked: new Map() }));
  }
  return verdicts;
}

/**
 * Whether a webhook may connect to `ip` (IPv4 or IPv6 text; brackets and an IPv6 zone are ignored).
 * Internal and reserved ranges are blocked unless the address — or the IPv4 address an IPv6 form embeds —
 * lies inside one of `allow`. Text that is not an IP address is blocked.
 */
export function isBlockedAddress(ip: string, allow: readonly Cidr[]): BlockCheck {
  // The same few addresses come again and again (every delivery to an IP-literal URL, every resolution).
  const verdicts = verdictsFor(allow);
  let verdict = verdicts.checked.get(ip);
  if (!verdict) {
    if (verdicts.checked.size >= MAX_VERDICTS) verdicts.checked.clear();
    verdict = check(ip, verdicts.allowed);
    verdicts.checked.set(ip, verdict);
  }
  return { ...verdict };
}

function check(ip: string, allowed: CidrSet): BlockCheck {
  const shown = stripHost(ip);
  const address = parseAddress(shown);
  if (!address) return { blocked: true, reason: `not an IP address "${ip}"` };
  const inner = embeddedIPv4(address);
  if (allowed.has(address) || (inner !== undefined && allowed.has(inner))) return { blocked: false };
  const own = blockedReason(address);
  if (own) return { blocked: true, reason: `${own} ${shown}` };
  if (inner) {
    const reason = blockedReason(inner);
    if (reason) return { blocked: true, reason: `${reason} ${inner.text} (as ${shown})` };
  }
  return { blocked: false };
}
