import type { MethodArgs, MethodContext } from '@quire/apps';
import { ident, type Queryable, type Transaction } from '@quire/db';
import {
  docExists,
  getDoc,
  hashName,
  insertDoc,
  serializeDoc,
  storedName,
  updateDoc,
  type DocContext,
  type DocController,
  type DocData,
} from '@quire/documents';
import { doesNotExist, LinkValidationError, PermissionError, RequestEntityTooLarge, ValidationError } from '@quire/errors';
import { cint, cstr } from '@quire/frappe-compat';
import {
  ALLOWED_MIMETYPES,
  contentHash,
  contentTypeOf,
  fileKey,
  fileKeyOfUrl,
  filesAt,
  fileTypeOf,
  fileUrlOf,
  isRemoteUrl,
  mayReadFile,
  parseFileUrl,
  PRIVATE_PREFIX,
  PUBLIC_PREFIX,
  sanitizeFileName,
  suffixFileName,
} from '@quire/files';
import { ADMINISTRATOR, checkPermission, GUEST, ownerColumns, permittedLevels } from '@quire/permissions';

/**
 * File (frappe/core/doctype/file/file.py): one uploaded file, a link to one, or a folder. Bytes
 * live in the FileStore under the tenant's schema (`<schema>/public/files/<name>`,
 * `<schema>/private/files/<name>`) and are served at `file_url` (`/files/<name>`,
 * `/private/files/<name>`). Uploads are de-duplicated as Frappe does: the same bytes (MD5
 * `content_hash`) uploaded again, with the same privacy, share the stored file and its URL; a
 * different file under a taken name gets the last 6 characters of its hash appended. The bytes go
 * when the last File row pointing at them is deleted.
 */

export const HOME = 'Home';
export const ATTACHMENTS = 'Home/Attachments';

/** Fields only the server sets: kept from the stored row on every save. */
const SERVER_FIELDS = ['content_hash', 'file_size', 'is_folder', 'is_home_folder', 'is_attachments_folder', 'thumbnail_url'] as const;
/** Fields that locate the stored bytes: a save may not change them. */
const LOCATION_FIELDS = ['file_url', 'is_private'] as const;

const FIELDNAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ATTACH_FIELDTYPES = new Set(['Attach', 'Attach Image']);

/** What saveFile stored in a transaction, by URL: only a File inserted there may claim those bytes. */
interface StoredBytes {
  hash: string;
  size: number;
}
const storedIn = new WeakMap<Transaction, Map<string, StoredBytes>>();

const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const flag = (v: unknown): number => (Number(v) ? 1 : 0);

/** Serialises writers of one key (a content hash, a file URL) of one tenant until the transaction ends. */
async function lock(q: Queryable, key: string): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`quire.file:${key}`]);
}

// ------------------------------------------------------------------------------------ checks

/**
 * Attaching to a document needs the document to exist and the caller to be allowed to write it
 * (frappe/handler.py::check_write_permission). Child-table rows take no attachments.
 */
export async function checkAttachTarget(ctx: DocContext, doctype: string, name: string): Promise<void> {
  const meta = ctx.meta.get(doctype);
  if (!meta) throw new LinkValidationError(`Could not find Attached To DocType: ${doctype}`, { title: 'Invalid Link' });
  if (meta.istable) throw new ValidationError(`Files cannot be attached to rows of the child table ${doctype}`, { title: 'Invalid Attachment' });
  if (meta.issingle) {
    checkPermission(meta, ctx.principal, 'write');
    return;
  }
  const stored = storedName(meta, name);
  // Whose document it is (owner and owner fields) is all the write check needs of it.
  const columns = ownerColumns(meta)
    .map((c) => ident(c))
    .join(', ');
  const row =
    stored === undefined
      ? undefined
      : (await ctx.db.query<Record<string, unknown>>(`SELECT ${columns} FROM ${meta.table} WHERE "name" = $1`, [stored])).rows[0];
  if (!row) throw doesNotExist(doctype, name);
  checkPermission(meta, ctx.principal, 'write', { ...row, name });
}

/** The attachment fields of a File: consistent, and (for new or changed targets) writable by the caller. */
async function validateAttachment(ctx: DocContext, doc: DocData, previous: DocData | undefined, trusted: boolean): Promise<void> {
  const doctype = text(doc.attached_to_doctype);
  const name = text(doc.attached_to_name);
  const field = text(doc.attached_to_field);
  if (!doctype) {
    doc.attached_to_name = doc.attached_to_name || null;
    return;
  }
  if (!name) throw new ValidationError('Attached To Name must be a string or an integer', { title: 'Invalid Attachment' });
  if (field && !FIELDNAME_RE.test(field)) {
    throw new ValidationError("The fieldname you've specified in Attached To Field is invalid", { title: 'Invalid Attachment' });
  }
  const changed = !previous || text(previous.attached_to_doctype) !== doctype || text(previous.attached_to_name) !== name;
  if (changed && !trusted) await checkAttachTarget(ctx, doctype, name);
}

/**
 * A new File's `file_url`: bytes saveFile stored in this transaction; an existing local file the
 * caller may read (a second row for the same bytes, as Frappe's library files); or a remote
 * http(s) URL. Sets `is_private`, `content_hash` and `file_size` to match.
 */
async function resolveUrl(ctx: DocContext, tx: Transaction, doc: DocData, trusted: boolean): Promise<void> {
  const url = text(doc.file_url).trim();
  if (!url) throw new ValidationError('No file attached: give file contents or a file_url', { title: 'Missing File' });
  doc.file_url = url;
  const local = parseFileUrl(url);
  if (local) {
    doc.is_private = local.isPrivate ? 1 : 0;
    doc.file_name = text(doc.file_name) || local.name;
    const fresh = storedIn.get(tx)?.get(url);
    if (fresh) {
      doc.content_hash = fresh.hash;
      doc.file_size = fresh.size;
      return;
    }
    const existing = await filesAt(ctx, url);
    const first = existing[0];
    if (!first) throw new ValidationError(`File ${url} does not exist`, { title: 'File Not Found' });
    if (!trusted) {
      let readable = false;
      for (const f of existing) if ((readable = await mayReadFile(ctx, f))) break;
      if (!readable) throw new PermissionError(`You don't have permission to access the file ${url}`, { title: 'Not Permitted' });
    }
    doc.content_hash = first.content_hash;
    doc.file_size = first.file_size;
    return;
  }
  if (url.startsWith(PUBLIC_PREFIX) || url.startsWith(PRIVATE_PREFIX)) throw new ValidationError(`Invalid file URL ${url}`, { title: 'Invalid URL' });
  if (!isRemoteUrl(url)) throw new ValidationError('URL must start with http:// or https://', { title: 'Invalid URL' });
  doc.content_hash = null;
  doc.file_size = 0;
  if (!text(doc.file_name)) doc.file_name = sanitizeFileName(decodeURIComponentSafe(new URL(url).pathname));
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Home and Home/Attachments exist in every tenant that has files (Frappe makes them at install). */
async function ensureFolder(ctx: DocContext, name: string): Promise<void> {
  if (name !== HOME && name !== ATTACHMENTS) return;
  if (await docExists(ctx, 'File', name)) return;
  if (name === ATTACHMENTS) await ensureFolder(ctx, HOME);
  const input: DocData =
    name === HOME
      ? { file_name: 'Home', is_folder: 1, is_home_folder: 1, owner: ADMINISTRATOR }
      : { file_name: 'Attachments', folder: HOME, is_folder: 1, is_attachments_folder: 1, owner: ADMINISTRATOR };
  try {
    await insertDoc(ctx, 'File', input, { ignorePermissions: true, keepTimestamps: true, name });
  } catch (e) {
    // made by a concurrent first upload
    if (!(await docExists(ctx, 'File', name))) throw e;
  }
}

// ------------------------------------------------------------------------------------ controller

export const controller: DocController = {
  async before_insert({ doc, ctx, tx, flags }) {
    const trusted = !!flags.ignorePermissions;
    doc.is_folder = flag(doc.is_folder);
    if (!trusted) doc.is_home_folder = doc.is_attachments_folder = 0;
    doc.thumbnail_url = null;
    if (doc.is_folder) {
      const name = text(doc.file_name).trim();
      if (!name || name.includes('/') || name === '.' || name === '..') throw new ValidationError('Invalid folder name', { title: 'Invalid Folder' });
      doc.file_name = name;
      doc.file_url = null;
      doc.content_hash = null;
      doc.file_size = 0;
      doc.is_private = 0;
      if (!doc.is_home_folder && !text(doc.folder)) doc.folder = HOME;
    } else {
      await resolveUrl(ctx, tx, doc, trusted);
      if (!text(doc.folder)) doc.folder = text(doc.attached_to_doctype) ? ATTACHMENTS : HOME;
    }
    if (text(doc.folder)) await ensureFolder(ctx, text(doc.folder));
  },

  autoname({ doc }) {
    // Folders are named by their path (File.autoname); files get a random name.
    if (doc.is_folder) doc.name = text(doc.folder) ? `${text(doc.folder)}/${text(doc.file_name)}` : text(doc.file_name);
    else doc.name = hashName();
  },

  before_validate({ doc, previous }) {
    if (previous) {
      for (const f of LOCATION_FIELDS) {
        if (cstr(doc[f]) !== cstr(previous[f])) {
          throw new ValidationError(`${f} of a File cannot be changed; upload the file again instead`, { title: 'Not Allowed' });
        }
      }
      for (const f of SERVER_FIELDS) doc[f] = previous[f];
    }
    const named = text(doc.file_name) || parseFileUrl(doc.file_url)?.name || '';
    doc.file_type = doc.is_folder ? null : (fileTypeOf(named) ?? null);
  },

  async validate({ doc, previous, ctx, flags }) {
    await validateAttachment(ctx, doc, previous, !!flags.ignorePermissions);
    const folder = text(doc.folder);
    if (folder) {
      if (folder === doc.name) throw new ValidationError('A folder cannot be inside itself', { title: 'Invalid Folder' });
      const meta = ctx.meta.require('File');
      const row = (await ctx.db.query<{ is_folder: number }>(`SELECT "is_folder" FROM ${meta.table} WHERE "name" = $1`, [folder])).rows[0];
      if (row && !row.is_folder) throw new ValidationError(`${folder} is not a folder`, { title: 'Invalid Folder' });
    }
  },

  async after_insert({ doc, ctx }) {
    // upload_file's `fieldname`: the document's Attach field points at the new file (Frappe sets it too).
    const doctype = text(doc.attached_to_doctype);
    const name = text(doc.attached_to_name);
    const field = text(doc.attached_to_field);
    if (!doctype || !name || !field || !doc.file_url) return;
    const meta = ctx.meta.get(doctype);
    const target = meta?.field(field);
    if (!meta || !target || !ATTACH_FIELDTYPES.has(target.fieldtype) || meta.issingle || !(await docExists(ctx, doctype, name))) return;
    await updateDoc(ctx, doctype, name, { [field]: doc.file_url }, { ignorePermissions: true });
  },

  async on_trash({ doc, ctx, tx }) {
    if (Number(doc.is_home_folder) || Number(doc.is_attachments_folder)) {
      throw new ValidationError('Cannot delete Home and Attachments folders', { title: 'Not Allowed' });
    }
    // Keeps a concurrent upload of the same bytes from reusing the URL whose bytes are going.
    if (doc.content_hash) await lock(tx, `${ctx.tenant.schema}:${text(doc.content_hash)}`);
  },

  async after_delete({ doc, ctx }) {
    const key = fileKeyOfUrl(ctx.tenant.schema, doc.file_url);
    if (!key) return;
    // The row is gone in this transaction: anything still at the URL is another File sharing the bytes.
    if ((await filesAt(ctx, String(doc.file_url))).length > 0) return;
    await ctx.files.delete(key);
  },
};

// ------------------------------------------------------------------------------------ saving

export interface SaveFileInput {
  /** The bytes of an upload; without them `fileUrl` links an existing or remote file. */
  content?: Buffer;
  fileName?: string;
  fileUrl?: string;
  isPrivate: boolean;
  folder?: string;
  attachedToDoctype?: string;
  attachedToName?: string;
  attachedToField?: string;
}

/**
 * Stores an upload's bytes (or reuses identical stored bytes) and inserts its File document, in
 * one transaction: permission checks first, bytes next, the document last; if the document
 * cannot be inserted, bytes written for it are removed again.
 */
export function saveFile(ctx: DocContext, input: SaveFileInput): Promise<DocData> {
  const meta = ctx.meta.require('File');
  checkPermission(meta, ctx.principal, 'create');
  return ctx.db.transaction(async (tx) => {
    const inner: DocContext = { ...ctx, db: tx };
    if (input.attachedToDoctype && input.attachedToName) await checkAttachTarget(inner, input.attachedToDoctype, input.attachedToName);
    const doc: DocData = {
      file_name: input.fileName ? sanitizeFileName(input.fileName) : null,
      is_private: input.isPrivate ? 1 : 0,
      folder: input.folder || null,
      attached_to_doctype: input.attachedToDoctype || null,
      attached_to_name: input.attachedToName || null,
      attached_to_field: input.attachedToField || null,
      file_url: input.fileUrl ?? null,
    };
    let written: string | undefined;
    if (input.content) {
      await ctx.quota?.beforeStoring(tx, input.content.length);
      const saved = await storeBytes(inner, tx, input.content, input.fileName ?? '', input.isPrivate);
      doc.file_url = saved.url;
      if (saved.fresh) written = saved.key;
      let pending = storedIn.get(tx);
      if (!pending) storedIn.set(tx, (pending = new Map<string, StoredBytes>()));
      pending.set(saved.url, { hash: saved.hash, size: input.content.length });
    }
    try {
      return await insertDoc(inner, 'File', doc);
    } catch (e) {
      if (written) await ctx.files.delete(written).catch(() => undefined);
      throw e;
    } finally {
      storedIn.get(tx)?.delete(String(doc.file_url));
    }
  });
}

interface SavedBytes {
  url: string;
  key: string;
  hash: string;
  /** Written under a name no File used before (so removable if the insert fails). */
  fresh: boolean;
}

async function storeBytes(ctx: DocContext, tx: Transaction, content: Buffer, fileName: string, isPrivate: boolean): Promise<SavedBytes> {
  const schema = ctx.tenant.schema;
  const meta = ctx.meta.require('File');
  const hash = contentHash(content);
  await lock(tx, `${schema}:${hash}`);
  const prefix = isPrivate ? PRIVATE_PREFIX : PUBLIC_PREFIX;
  const { rows } = await tx.query<{ file_url: string }>(
    `SELECT "file_url" FROM ${meta.table} WHERE "content_hash" = $1 AND "is_private" = $2 AND "is_folder" = 0 AND starts_with("file_url", $3)
      ORDER BY "creation" LIMIT 1`,
    [hash, isPrivate ? 1 : 0, prefix],
  );
  const duplicate = parseFileUrl(rows[0]?.file_url);
  let name: string | undefined = duplicate?.name;
  let fresh = false;
  if (!name) {
    const base = sanitizeFileName(fileName);
    const candidates = [base, suffixFileName(base, hash.slice(-6))];
    for (let i = 0; i < 5; i++) candidates.push(suffixFileName(base, hashName().slice(-6)));
    for (const candidate of candidates) {
      const url = fileUrlOf(isPrivate, candidate);
      await lock(tx, `${schema}:${url}`);
      const taken = await tx.query(`SELECT 1 FROM ${meta.table} WHERE "file_url" = $1 LIMIT 1`, [url]);
      if (taken.rows.length === 0) {
        name = candidate;
        break;
      }
    }
    if (!name) throw new ValidationError(`Could not find a free name for ${base}`, { title: 'File Exists' });
    fresh = true;
  }
  const key = fileKey(schema, isPrivate, name);
  // Written again for a duplicate too: the same bytes under the same key, and a lost copy is restored.
  await ctx.files.put(key, content, contentTypeOf(name));
  return { url: fileUrlOf(isPrivate, name), key, hash, fresh };
}

// ------------------------------------------------------------------------------------ upload_file

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

/**
 * frappe.handler.upload_file: the first multipart part named `file` (or `file_url`, or
 * `library_file_name` to reuse a File the caller may read) becomes a File document, attached to
 * `doctype`/`docname` (and its `fieldname` set) when given. Returns the File as frappe.client does.
 */
export async function uploadFile(args: MethodArgs, ctx: MethodContext): Promise<DocData> {
  const doc = ctx.doc;
  // Frappe lets Guests upload only when System Settings allow it; that setting does not exist here.
  if (doc.principal.user === GUEST) throw new PermissionError('Guests are not allowed to upload files', { title: 'Not Permitted' });
  if (str(args.method)) {
    throw new ValidationError('upload_file does not support a custom `method`; call that method directly', { title: 'Not Supported' });
  }
  let isPrivate = cint(args.is_private) !== 0;
  let fileUrl = str(args.file_url);
  let fileName = str(args.file_name);
  const doctype = str(args.doctype);
  const docname = str(args.docname);
  const fieldname = str(args.fieldname);
  const folder = str(args.folder) || HOME;

  const library = str(args.library_file_name);
  if (library) {
    const libraryFile = await getDoc(doc, 'File', library);
    isPrivate = !!Number(libraryFile.is_private);
    fileUrl = text(libraryFile.file_url);
    fileName = text(libraryFile.file_name);
  }

  if (doctype && !docname) {
    const meta = doc.meta.require(doctype);
    checkPermission(meta, doc.principal, 'write');
  }

  const part = ctx.request.files.find((f) => f.fieldname === 'file');
  let content: Buffer | undefined;
  if (part) {
    content = part.data;
    if (content.length > ctx.settings.maxFileSize) {
      throw new RequestEntityTooLarge(`File size exceeded the maximum allowed size of ${ctx.settings.maxFileSize} bytes`, { title: 'File too big' });
    }
    fileName = fileName || part.filename;
    fileUrl = '';
  }
  if (!content && !fileUrl) throw new ValidationError('No file attached', { title: 'Missing File' });

  if (content && !doc.principal.roles.has('Desk User') && !ALLOWED_MIMETYPES.has(contentTypeOf(fileName))) {
    throw new ValidationError('You can only upload JPG, PNG, PDF, TXT, CSV or Microsoft documents.', { title: 'Not Allowed' });
  }

  const saved = await saveFile(doc, {
    ...(content ? { content } : { fileUrl }),
    fileName,
    isPrivate,
    folder,
    ...(doctype && docname ? { attachedToDoctype: doctype, attachedToName: docname } : {}),
    ...(doctype && docname && fieldname ? { attachedToField: fieldname } : {}),
  });
  const meta = doc.meta.require('File');
  return serializeDoc(doc.meta, meta, saved, { includeNulls: true, hidden: permittedLevels(meta, doc.principal).hidden });
}
