import { createHash } from 'node:crypto';
import path from 'node:path';
import { pyLen, pySlice } from '@quire/frappe-compat';

/**
 * File names, URLs and storage keys (frappe/core/doctype/file): a stored file is one flat name
 * under a tenant's public or private folder, served at `/files/<name>` or `/private/files/<name>`.
 * Names come from clients, so they are cut down to one safe segment before anything else sees them.
 */

export const PUBLIC_PREFIX = '/files/';
export const PRIVATE_PREFIX = '/private/files/';

/** Longest stored file name, in characters (File.file_name is a 140-character Data field; room for a suffix). */
export const MAX_FILE_NAME = 120;

/** Frappe's content hash: the MD5 of the bytes, hex (frappe/utils/file_manager.py::get_content_hash). */
export function contentHash(data: Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

// Path separators, characters with a meaning in URLs (`?`, `#`, `%`), characters Windows refuses
// in file names, and control characters (NUL included).
// eslint-disable-next-line no-control-regex -- control characters are exactly what this strips
const UNSAFE_CHARS = /[/\\?#%*:|"<>\u0000-\u001f\u007f]/g;

/**
 * One safe file name from whatever a client sent: the last path part only (browsers and old
 * clients send `C:\fakepath\x.png`), no control characters, nothing URL- or path-significant, no
 * leading dots (so never `.` or `..`), at most MAX_FILE_NAME characters with the extension kept.
 * An empty result becomes `file`.
 */
export function sanitizeFileName(raw: string): string {
  let name = raw;
  const cut = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
  if (cut >= 0) name = name.slice(cut + 1);
  name = name.normalize('NFC').replace(UNSAFE_CHARS, '_').replace(/\s+/g, ' ').trim();
  name = name.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  if (name === '') return 'file';
  if (pyLen(name) <= MAX_FILE_NAME) return name;
  const ext = path.extname(name);
  const kept = pyLen(ext) <= 16 ? ext : '';
  return pySlice(name, MAX_FILE_NAME - pyLen(kept)).trimEnd() + kept;
}

/** Whether a name is already one safe segment (what sanitizeFileName returns for it). */
export function isSafeFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && sanitizeFileName(name) === name;
}

/** Frappe's get_file_name: the suffix goes between the name and its extension (`a.txt` -> `a3f9c1.txt`). */
export function suffixFileName(name: string, suffix: string): string {
  const ext = path.extname(name);
  const base = ext ? name.slice(0, -ext.length) : name;
  return `${base}${suffix}${ext}`;
}

export function fileUrlOf(isPrivate: boolean, name: string): string {
  return `${isPrivate ? PRIVATE_PREFIX : PUBLIC_PREFIX}${name}`;
}

/** A local file URL's parts, or undefined for anything else (remote URLs, folders, hostile paths). */
export function parseFileUrl(url: unknown): { isPrivate: boolean; name: string } | undefined {
  if (typeof url !== 'string') return undefined;
  const isPrivate = url.startsWith(PRIVATE_PREFIX);
  if (!isPrivate && !url.startsWith(PUBLIC_PREFIX)) return undefined;
  const name = url.slice(isPrivate ? PRIVATE_PREFIX.length : PUBLIC_PREFIX.length);
  return isSafeFileName(name) ? { isPrivate, name } : undefined;
}

/** Where a tenant's file lives in the FileStore: `<schema>/public/files/<name>` or `<schema>/private/files/<name>`. */
export function fileKey(schema: string, isPrivate: boolean, name: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(schema)) throw new Error(`invalid tenant schema ${JSON.stringify(schema)}`);
  if (!isSafeFileName(name)) throw new Error(`invalid file name ${JSON.stringify(name)}`);
  return `${schema}/${isPrivate ? 'private' : 'public'}/files/${name}`;
}

/** The store key of a local file URL of a tenant, or undefined when the URL is not a local file. */
export function fileKeyOfUrl(schema: string, url: unknown): string | undefined {
  const parsed = parseFileUrl(url);
  return parsed && fileKey(schema, parsed.isPrivate, parsed.name);
}

/** Whether a file URL points somewhere else (http/https), as Frappe's File.is_remote_file. */
export function isRemoteUrl(url: unknown): boolean {
  return typeof url === 'string' && /^https?:\/\//i.test(url);
}
