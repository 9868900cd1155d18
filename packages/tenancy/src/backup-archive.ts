import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { SecretBox } from '@quire/auth';
import { ValidationError, type FrappeError } from '@quire/errors';
import { z } from 'zod';

/**
 * The file `quire tenant backup` writes: gzip'd lines, each a JSON record. A record may carry a
 * payload, the next line taken as is (rows as Postgres wrote them as JSON, or a file's bytes in
 * base64), so numbers never pass through JavaScript's and lose digits.
 *
 *   manifest · ddl · sequences · (table, rows…)* · (file | file-missing)* · end
 *
 * The last line is an HMAC-SHA256 of every line before it, keyed from the platform's encryption
 * key: a restore runs the archive's DDL, so it takes only what this platform (or one with the same
 * QUIRE_ENCRYPTION_KEY) wrote, unaltered; it checks the whole file before running anything.
 */

export const BACKUP_FORMAT = 'quire-tenant-backup';

const Manifest = z.object({
  kind: z.literal('manifest'),
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(1),
  tenant: z.string(),
  schema: z.string(),
  cluster: z.string(),
  takenAt: z.string(),
  /** The release the tenant was last migrated to (a restore migrates it to the running one). */
  release: z.string().nullable(),
  /** Which key signed it (see keyIdOf), for a clear refusal on another platform. */
  keyId: z.string(),
  status: z.string(),
  config: z.record(z.string(), z.unknown()),
  domains: z.array(z.string()),
});
const Ddl = z.object({ kind: z.literal('ddl'), tables: z.array(z.string()), constraints: z.array(z.string()) });
const Sequences = z.object({
  kind: z.literal('sequences'),
  values: z.array(z.object({ name: z.string(), value: z.string(), called: z.boolean() })),
});
/** A table's rows follow in `rows` records; `digest` is tableDigest's over them (rows in any order). */
const Table = z.object({ kind: z.literal('table'), name: z.string(), rows: z.number().int().nonnegative(), digest: z.string() });
/** Payload: a JSON array of the rows. */
const Rows = z.object({ kind: z.literal('rows'), table: z.string(), count: z.number().int().positive() });
/** Payload: the bytes in base64. `path` is the store key under the tenant's prefix (`private/files/x.pdf`). */
const File = z.object({ kind: z.literal('file'), path: z.string(), size: z.number().int().nonnegative(), sha256: z.string() });
/** A file a File row names but the store did not have when the backup read it. */
const FileMissing = z.object({ kind: z.literal('file-missing'), path: z.string() });
const End = z.object({ kind: z.literal('end'), tables: z.number().int(), rows: z.number().int(), files: z.number().int(), fileBytes: z.number().int() });

export const BackupRecord = z.discriminatedUnion('kind', [Manifest, Ddl, Sequences, Table, Rows, File, FileMissing, End]);
export type BackupRecord = z.infer<typeof BackupRecord>;
export type BackupManifest = z.infer<typeof Manifest>;

/** Records that carry a payload line. */
function hasPayload(record: BackupRecord): boolean {
  return record.kind === 'rows' || record.kind === 'file';
}

/** The HMAC key for archives, and its public id. */
function signingKey(secrets: SecretBox): Buffer {
  return secrets.derive('tenant-backup');
}

export function keyIdOf(secrets: SecretBox): string {
  return createHash('sha256').update(signingKey(secrets)).digest('hex').slice(0, 16);
}

/** One line of the archive: a record and, for rows and files, its payload. */
export interface ArchiveLine {
  record: BackupRecord;
  payload?: string;
}

/**
 * Writes the lines `lines` yields to `out` (a path; written beside it and renamed when complete, so
 * a backup that fails leaves nothing half-written under that name), signed.
 */
export async function writeArchive(out: string, secrets: SecretBox, lines: AsyncIterable<ArchiveLine>): Promise<void> {
  const hmac = createHmac('sha256', signingKey(secrets));
  async function* text(): AsyncGenerator<string> {
    for await (const line of lines) {
      yield signed(hmac, `${JSON.stringify(line.record)}\n`);
      if (hasPayload(line.record)) yield signed(hmac, `${line.payload ?? ''}\n`);
    }
    yield `${JSON.stringify({ kind: 'signature', hmac: hmac.digest('hex') })}\n`;
  }
  const partial = `${out}.partial`;
  try {
    await pipeline(text(), createGzip({ level: 6 }), createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, out);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
}

function signed(hmac: ReturnType<typeof createHmac>, line: string): string {
  hmac.update(line);
  return line;
}

/** The archive cannot be restored: not ours, altered, cut short, or not a backup at all. */
export function invalidBackup(message: string): FrappeError {
  return new ValidationError(message, { title: 'Invalid Backup' });
}

/** The raw lines of an archive (gzip'd), without their newlines. */
async function* rawLines(file: string): AsyncGenerator<string> {
  const gunzip = createGunzip();
  const input = createReadStream(file).on('error', (e) => gunzip.destroy(e));
  const lines = readline.createInterface({ input: input.pipe(gunzip), crlfDelay: Infinity });
  try {
    for await (const line of lines) yield line;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalidBackup(`No backup at ${file}`);
    if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') throw invalidBackup(`${file} is not a Quire tenant backup, or it is damaged (gzip: ${code})`);
    throw e;
  }
}

function parseRecord(line: string): BackupRecord {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw invalidBackup('The backup has a line that is not JSON where a record should be');
  }
  const parsed = BackupRecord.safeParse(json);
  if (!parsed.success) throw invalidBackup(`The backup has a record this version does not know: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/**
 * Reads the archive once to check it is whole and signed by this platform's key (and, for a clear
 * message, that its manifest is one); returns the manifest. Nothing of it is acted on before this.
 */
export async function verifyArchive(file: string, secrets: SecretBox): Promise<BackupManifest> {
  const hmac = createHmac('sha256', signingKey(secrets));
  let manifest: BackupManifest | undefined;
  let last: string | undefined;
  for await (const line of rawLines(file)) {
    if (last !== undefined) hmac.update(`${last}\n`);
    if (manifest === undefined) {
      const first = parseRecord(line);
      if (first.kind !== 'manifest') throw invalidBackup('The backup does not begin with its manifest');
      if (first.keyId !== keyIdOf(secrets)) {
        throw invalidBackup(
          `This backup was made by another platform (or under another QUIRE_ENCRYPTION_KEY): restore it where the key it was made with is set`,
        );
      }
      manifest = first;
    }
    last = line;
  }
  if (manifest === undefined || last === undefined) throw invalidBackup(`${file} is empty`);
  const signature = z.object({ kind: z.literal('signature'), hmac: z.string() }).safeParse(safeJson(last));
  if (!signature.success) throw invalidBackup('The backup is cut short: it has no signature at its end');
  const expected = hmac.digest();
  const given = Buffer.from(signature.data.hmac, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidBackup('The backup was altered or damaged after it was made');
  return manifest;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** The archive's records in order, each with its payload (read after verifyArchive). */
export async function* readArchive(file: string): AsyncGenerator<ArchiveLine> {
  const lines = rawLines(file);
  try {
    for (;;) {
      const next = await lines.next();
      if (next.done) return;
      const json = safeJson(next.value);
      if (json !== null && typeof json === 'object' && (json as { kind?: unknown }).kind === 'signature') return;
      const record = parseRecord(next.value);
      if (!hasPayload(record)) {
        yield { record };
        continue;
      }
      const payload = await lines.next();
      if (payload.done) throw invalidBackup('The backup is cut short inside a record');
      yield { record, payload: payload.value };
    }
  } finally {
    await lines.return(undefined);
  }
}
