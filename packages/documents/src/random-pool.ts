import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for names and ids, taken from a 4 KiB pool filled from the CSPRNG at once, as
 * crypto.randomUUID does: one randomBytes call per new document and per webhook event was 5% of a
 * write's CPU (npm run bench -- writes). The bytes are as random; only the calls are fewer.
 */
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;

/** `size` (at most 256) fresh random bytes, into `target` at 0. */
export function fillRandom(target: Uint8Array, size: number): void {
  if (offset + size > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  pool.copy(target, 0, offset, offset + size);
  offset += size;
}
