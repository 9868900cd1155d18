/**
 * `Authorization: Basic <base64(user:password)>` (RFC 7617). The value must be canonical base64:
 * Node's decoder skips characters it does not know, which would let a garbled header authenticate.
 */
export type BasicCredentials = { user: string; password: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The credentials of a Basic header's value (the part after `Basic `): undefined when there is no
 * `user:` part, `'malformed'` when the value is not base64.
 */
export function parseBasicCredentials(value: string): BasicCredentials | 'malformed' | undefined {
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  if (!BASE64.test(value) || Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) return 'malformed';
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The value of an `Authorization` header of scheme `scheme` (case-insensitive), else undefined. */
export function authorizationOf(header: string | undefined, scheme: string): string | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space <= 0 || header.slice(0, space).toLowerCase() !== scheme.toLowerCase()) return undefined;
  return header.slice(space + 1).trim();
}
