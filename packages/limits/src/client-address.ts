import net from 'node:net';

/**
 * The address a limit counts a client by. IPv4 as it is (an IPv4-mapped IPv6 address as its IPv4
 * form); IPv6 by its /64 prefix, since one subscriber is routinely given a whole /64 and could
 * otherwise take a fresh address for every call.
 */
export function clientBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (!net.isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, each without leading zeros (a zone index dropped). */
function expandIPv6(address: string): string[] {
  const bare = address.split('%')[0] ?? address;
  // A trailing dotted IPv4 part counts as two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(bare);
  const text = dotted
    ? `${bare.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : bare;
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((g) => Number.parseInt(g, 16).toString(16));
}
