// `k6/encoding` for the Node runner: base64 in k6's four variants.
type Variant = 'std' | 'rawstd' | 'url' | 'rawurl';

export function b64encode(input: string | ArrayBuffer, variant: Variant = 'std'): string {
  const buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
  const url = variant === 'url' || variant === 'rawurl';
  const out = buf.toString(url ? 'base64url' : 'base64');
  if (variant === 'rawstd') return out.replace(/=+$/, '');
  if (variant === 'url') return out.padEnd(Math.ceil(out.length / 4) * 4, '=');
  return out;
}

export function b64decode(input: string, variant: Variant = 'std', format?: 's'): string | ArrayBuffer {
  const buf = Buffer.from(input, variant === 'url' || variant === 'rawurl' ? 'base64url' : 'base64');
  return format === 's' ? buf.toString('utf8') : buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
}

export default { b64encode, b64decode };
