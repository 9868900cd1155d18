import path from 'node:path';

/**
 * Content types by extension (Python's mimetypes table, as Frappe uses it through guess_type):
 * what `/files/…` answers with, and what File.file_type records.
 */

const TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.md': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.bmp': 'image/bmp',
  '.ico': 'image/vnd.microsoft.icon',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.heic': 'image/heic',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.7z': 'application/x-7z-compressed',
  '.rar': 'application/vnd.rar',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.odp': 'application/vnd.oasis.opendocument.presentation',
  '.rtf': 'application/rtf',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.avi': 'video/x-msvideo',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
};

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** The content type of a file name, from its extension; application/octet-stream when unknown. */
export function contentTypeOf(fileName: string): string {
  return TYPES[path.extname(fileName).toLowerCase()] ?? DEFAULT_CONTENT_TYPE;
}

/** File.file_type: the extension without the dot, upper-cased (`report.pdf` -> `PDF`), or undefined. */
export function fileTypeOf(fileName: string): string | undefined {
  const ext = path.extname(fileName).slice(1);
  return ext ? ext.toUpperCase() : undefined;
}

/**
 * Types a browser would run as a page on our origin. Frappe's send_private_file makes these
 * (.svg, .html, .htm, .xml) downloads instead of inline content; we do the same for every file.
 */
const SCRIPTABLE = new Set(['.svg', '.html', '.htm', '.xhtml', '.xml', '.xht', '.shtml', '.mht', '.mhtml', '.js', '.mjs']);

export function isScriptable(fileName: string): boolean {
  return SCRIPTABLE.has(path.extname(fileName).toLowerCase());
}

/**
 * What Frappe lets Guests and Website Users upload (frappe/handler.py::ALLOWED_MIMETYPES):
 * "You can only upload JPG, PNG, PDF, TXT, CSV or Microsoft documents."
 */
export const ALLOWED_MIMETYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'application/pdf',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'text/plain',
  'video/quicktime',
  'video/mp4',
  'text/csv',
]);
