import { hash } from 'node:crypto';
import type { DocData } from '@quire/documents';
import { PreconditionFailed } from '@quire/errors';
import type { IncomingMessage } from 'node:http';

/**
 * HTTP validators for documents (RFC 9110 §8.8.3, §13.1). A document's entity tag is derived from
 * what makes its representation: the DocType, the name, `modified` (every save moves it, child
 * rows included) and the fields the caller may not see (permlevels: two callers may be shown two
 * representations of one version). It is strong: one version, one caller's view, one body.
 */
export function documentEtag(doctype: string, doc: DocData, hidden: ReadonlySet<string>): string {
  const view = hidden.size === 0 ? '' : [...hidden].sort().join(',');
  // One-shot SHA-1, 27 characters: a tag only has to change whenever its inputs do.
  return `"${hash('sha1', `${doctype}\0${String(doc.name)}\0${String(doc.modified)}\0${view}`, 'base64url')}"`;
}

/** The entity tags of an `If-Match` / `If-None-Match` value, `*` as itself; undefined when absent. */
function listed(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const tags = header.match(/\*|(?:W\/)?"[^"]*"/g);
  return tags ?? [];
}

/**
 * `If-None-Match` on a read (weak comparison, §13.1.2): true when the caller's copy is current and
 * the answer is 304 Not Modified.
 */
export function notModified(req: IncomingMessage, etag: string): boolean {
  const tags = listed(req.headers['if-none-match']);
  if (!tags) return false;
  const opaque = etag.replace(/^W\//, '');
  return tags.some((t) => t === '*' || t.replace(/^W\//, '') === opaque);
}

/**
 * `If-Match` on an update or delete (strong comparison, §13.1.1), as a check the write runs
 * against the stored document inside its transaction (WriteFlags.precondition): a version other
 * than the one the caller saw is refused with 412. Undefined when the request has no `If-Match`.
 */
export function ifMatch(req: IncomingMessage, doctype: string, hidden: ReadonlySet<string>): ((stored: DocData) => void) | undefined {
  const tags = listed(req.headers['if-match']);
  if (!tags) return undefined;
  return (stored) => {
    if (tags.includes('*')) return;
    const current = documentEtag(doctype, stored, hidden);
    if (!tags.includes(current)) {
      throw new PreconditionFailed(`${doctype} ${String(stored.name)} has changed since the version named in If-Match`, { title: 'Document Modified' });
    }
  };
}
