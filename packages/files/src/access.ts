import { getDoc, type DocContext } from '@quire/documents';
import { FrappeError } from '@quire/errors';
import { GUEST, hasPermission, isAdministrator, scopeAllows } from '@quire/permissions';

/**
 * Who may download a file (frappe/core/doctype/file/file.py::has_permission and
 * frappe/utils/response.py::download_private_file): a public file is anyone's; a private one is
 * its uploader's, Administrator's, anyone's who may read the File document, or anyone's who may
 * read the document it is attached to (an OAuth token's scopes narrow each of these). Several File rows may share one URL (uploads are
 * de-duplicated by content): any row the caller may read is enough. Guest never gets a private file.
 */

/** The columns of a File row that downloads and attachment checks look at (a type: a row is a record, as permission checks read it). */
export type StoredFile = {
  name: string;
  owner: string;
  file_name: string | null;
  file_url: string;
  is_private: number;
  file_size: number;
  content_hash: string | null;
  attached_to_doctype: string | null;
  attached_to_name: string | null;
};

/** Every File row (not folders) at a URL, oldest first. */
export async function filesAt(ctx: DocContext, url: string): Promise<StoredFile[]> {
  const meta = ctx.meta.get('File');
  if (!meta) return [];
  const { rows } = await ctx.db.query<StoredFile>(
    `SELECT "name", "owner", "file_name", "file_url", "is_private", "file_size", "content_hash", "attached_to_doctype", "attached_to_name"
       FROM ${meta.table} WHERE "file_url" = $1 AND "is_folder" = 0 ORDER BY "creation", "name"`,
    [url],
    { prepare: true },
  );
  return rows;
}

/** Whether the caller may read (download) this File row. */
export async function mayReadFile(ctx: DocContext, file: StoredFile): Promise<boolean> {
  const { principal } = ctx;
  if (!file.is_private) return true;
  if (principal.user === GUEST) return false;
  // The uploader's and Administrator's own right, unless an OAuth token's scopes leave File out.
  const scopedOut = principal.scopes !== undefined && !scopeAllows(principal.scopes, 'File', 'read');
  if ((isAdministrator(principal) || file.owner === principal.user) && !scopedOut) return true;
  const meta = ctx.meta.get('File');
  if (meta && hasPermission(meta, principal, 'read', file)) return true;
  if (!file.attached_to_doctype || !file.attached_to_name || !ctx.meta.get(file.attached_to_doctype)) return false;
  try {
    await getDoc(ctx, file.attached_to_doctype, file.attached_to_name);
    return true;
  } catch (e) {
    if (e instanceof FrappeError) return false; // gone, or not readable
    throw e;
  }
}

export type DownloadCheck = { status: 'ok'; file: StoredFile } | { status: 'forbidden' } | { status: 'missing' };

/** The File row through which the caller may download `url`, or why not. */
export async function checkDownload(ctx: DocContext, url: string): Promise<DownloadCheck> {
  const files = await filesAt(ctx, url);
  if (files.length === 0) return { status: 'missing' };
  for (const file of files) if (await mayReadFile(ctx, file)) return { status: 'ok', file };
  return { status: 'forbidden' };
}
