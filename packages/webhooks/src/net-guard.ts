/**
 * Which addresses a webhook may reach: everything public, nothing internal (loopback, private, link-local
 * incl. cloud metadata, CGNAT, multicast, reserved, documentation, and the IPv6 forms that embed such an
 * IPv4 address), except what an operator explicitly allows with CIDRs.
 */
import { isIP } from 'node:net';

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

interface Address {
  family: 4 | 6;
  value: bigint;
}

function bits(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

function parseIPv4(text: string): bigint {
  let value = 0n;
  for (const part of text.split('.')) value = (value << 8n) | BigInt(Number(part));
  return value;
}

/** Parses a textual IP (no brackets, no zone) already validated by `isIP`. */
function parseAddress(text: string): Address | undefined {
  const family = isIP(text);
  if (family === 4) return { family: 4, value: parseIPv4(text) };
  if (family !== 6) return undefined;
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // A trailing dotted IPv4 (::ffff:1.2.3.4) stands for the last two groups.
    const v4 = parseIPv4(text.slice(lastColon + 1));
    head = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = right === undefined ? leftGroups : [...leftGroups, ...Array<string>(missing).fill('0'), ...rightGroups];
  if (groups.length !== 8) return undefined;
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(parseInt(g, 16));
  return { family: 6, value };
}

function stripHost(ip: string): string {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0 && s.includes(':')) s = s.slice(0, zone); // fe80::1%eth0
  return s;
}

function formatAddress(a: Address): string {
  if (a.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((a.value >> s) & 0xffn)).join('.');
  const groups: number[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(Number((a.value >> s) & 0xffffn));
  // Longest run (>= 2) of zero groups becomes "::" (RFC 5952).
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function mask(family: 4 | 6, prefix: number): bigint {
  const width = BigInt(bits(family));
  const all = (1n << width) - 1n;
  return prefix === 0 ? 0n : (all << (width - BigInt(prefix))) & all;
}

function makeCidr(address: Address, prefix: number): Cidr {
  const network = address.value & mask(address.family, prefix);
  return { family: address.family, network, prefix, text: `${formatAddress({ family: address.family, value: network })}/${prefix}` };
}

function parseCidr(entry: string): Cidr {
  const slash = entry.indexOf('/');
  const host = stripHost(slash >= 0 ? entry.slice(0, slash) : entry);
  const address = parseAddress(host);
  if (!address) throw new CidrError(entry);
  const max = bits(address.family);
  let prefix = max;
  if (slash >= 0) {
    const p = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) throw new CidrError(entry);
    prefix = Number(p);
  }
  return makeCidr(address, prefix);
}

/** Parses a comma- and/or whitespace-separated list of CIDRs or single addresses; throws `CidrError` naming a bad entry. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .map(parseCidr);
}

function contains(cidr: Cidr, a: Address): boolean {
  return cidr.family === a.family && (a.value & mask(a.family, cidr.prefix)) === cidr.network;
}

const BLOCKED: ReadonlyArray<readonly [Cidr, string]> = (
  [
    // IPv4 — most specific first, the first match names the reason.
    ['169.254.169.254/32', 'metadata address'],
    ['255.255.255.255/32', 'broadcast address'],
    ['0.0.0.0/8', 'unspecified address'],
    ['10.0.0.0/8', 'private address'],
    ['100.64.0.0/10', 'carrier-grade NAT address'],
    ['127.0.0.0/8', 'loopback address'],
    ['169.254.0.0/16', 'link-local address'],
    ['172.16.0.0/12', 'private address'],
    ['192.0.0.0/24', 'reserved (IETF protocol) address'],
    ['192.0.2.0/24', 'documentation address'],
    ['192.168.0.0/16', 'private address'],
    ['198.18.0.0/15', 'benchmarking address'],
    ['198.51.100.0/24', 'documentation address'],
    ['203.0.113.0/24', 'documentation address'],
    ['224.0.0.0/4', 'multicast address'],
    ['240.0.0.0/4', 'reserved address'],
    // IPv6
    ['fd00:ec2::254/128', 'metadata address'],
    ['::/128', 'unspecified address'],
    ['::1/128', 'loopback address'],
    ['64:ff9b:1::/48', 'reserved (local translation) address'],
    ['100::/64', 'reserved (discard) address'],
    ['2001:db8::/32', 'documentation address'],
    ['fc00::/7', 'private address'],
    ['fe80::/10', 'link-local address'],
    ['fec0::/10', 'private (site-local) address'],
    ['ff00::/8', 'multicast address'],
  ] as const
).map(([cidr, label]) => [parseCidr(cidr), label] as const);

/** IPv6 forms that carry an IPv4 address a packet may end up at. */
const EMBEDDING: ReadonlyArray<readonly [Cidr, (v: bigint) => bigint]> = [
  [parseCidr('::ffff:0:0/96'), (v) => v & 0xffffffffn], // IPv4-mapped
  [parseCidr('::ffff:0:0:0/96'), (v) => v & 0xffffffffn], // IPv4-translated (SIIT)
  [parseCidr('64:ff9b::/96'), (v) => v & 0xffffffffn], // NAT64 well-known prefix
  [parseCidr('::/96'), (v) => v & 0xffffffffn], // IPv4-compatible (deprecated); :: and ::1 are matched first
  [parseCidr('2002::/16'), (v) => (v >> 80n) & 0xffffffffn], // 6to4
];

function embeddedIPv4(a: Address): Address | undefined {
  if (a.family !== 6 || a.value <= 1n) return undefined;
  for (const [cidr, extract] of EMBEDDING) {
    if (contains(cidr, a)) return { family: 4, value: extract(a.value) };
  }
  return undefined;
}

function blockedLabel(a: Address): string | undefined {
  for (const [cidr, label] of BLOCKED) if (contains(cidr, a)) return label;
  return undefined;
}

/**
 * Whether a webhook may connect to `ip` (IPv4 or IPv6 text; brackets and an IPv6 zone are ignored).
 * Internal and reserved ranges are blocked unless the address — or the IPv4 address an IPv6 form embeds —
 * lies inside one of `allow`. Text that is not an IP address is blocked.
 */
export function isBlockedAddress(ip: string, allow: readonly Cidr[]): BlockCheck {
  const shown = stripHost(ip);
  const address = parseAddress(shown);
  if (!address) return { blocked: true, reason: `not an IP address "${ip}"` };
  const inner = embeddedIPv4(address);
  if (allow.some((c) => contains(c, address) || (inner !== undefined && contains(c, inner)))) return { blocked: false };
  const own = blockedLabel(address);
  if (own) return { blocked: true, reason: `${own} ${shown}` };
  if (inner) {
    const label = blockedLabel(inner);
    if (label) return { blocked: true, reason: `${label} ${formatAddress(inner)} (as ${shown})` };
  }
  return { blocked: false };
}
