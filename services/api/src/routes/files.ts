import { DoesNotExistError, PermissionError } from '@quire/errors';
import { checkDownload, contentTypeOf, fileKey, fileUrlOf, isSafeFileName, isScriptable } from '@quire/files';
import { GUEST } from '@quire/permissions';
import type { Platform } from '@quire/tenancy';
import { Router, type Request, type Response } from 'express';
import { contentDisposition } from '../http/respond';

/**
 * Uploaded files (frappe/app.py, frappe/utils/response.py::download_private_file):
 * `GET /files/<name>` serves the request's tenant's public files to anyone;
 * `GET /private/files/<name>` only to callers who may read a File at that URL or the document it
 * is attached to (Guest never). Only names of files a File document records are served, and only
 * from the tenant's own folder of the store: a name is one safe segment, so no encoding of `..` or
 * `/` reaches the store.
 */

const PUBLIC_CACHE = 'public, max-age=3600';
const PRIVATE_CACHE = 'private, no-cache';

function notFound(): Error {
  return new DoesNotExistError('File not found', { title: 'Not Found' });
}

/** The `<name>` of the path: exactly one decoded segment that is a safe file name, else undefined. */
function fileName(req: Request): string | undefined {
  const segments = (req.params as { name?: string[] }).name ?? [];
  const name = segments.length === 1 ? segments[0] : undefined;
  return name !== undefined && isSafeFileName(name) ? name : undefined;
}

export function filesRouter(platform: Platform): Router {
  const files = platform.files;
  const router = Router({ strict: false });

  const serve = (isPrivate: boolean) => async (req: Request, res: Response) => {
    const name = fileName(req);
    if (name === undefined) throw notFound();
    const { tenant, principal } = res.locals;
    if (isPrivate && principal.user === GUEST) {
      throw new PermissionError('You need to be logged in to access this file', { title: 'Not Permitted' });
    }
    const url = fileUrlOf(isPrivate, name);
    const check = await checkDownload(await platform.context(tenant, principal), url);
    if (check.status === 'missing') throw notFound();
    if (check.status === 'forbidden') throw new PermissionError("You don't have permission to access this file", { title: 'Not Permitted' });
    const data = await files.get(fileKey(tenant.schema, isPrivate, name));
    if (!data) throw notFound();

    res.setHeader('Cache-Control', isPrivate ? PRIVATE_CACHE : PUBLIC_CACHE);
    res.setHeader('Vary', 'X-Frappe-Site-Name');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const etag = check.file.content_hash ? `"${check.file.content_hash}"` : undefined;
    if (etag) res.setHeader('ETag', etag);
    if (etag && req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Type', contentTypeOf(name));
    res.setHeader('Content-Length', String(data.length));
    if (isScriptable(name)) {
      // Frappe's send_private_file: what could run as a page on our origin is a download only.
      res.setHeader('Content-Disposition', contentDisposition(name));
      res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    }
    res.status(200).end(data);
  };

  router.get('/files/*name', serve(false));
  router.get('/private/files/*name', serve(true));
  return router;
}
