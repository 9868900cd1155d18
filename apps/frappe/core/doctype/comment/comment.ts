import type { Queryable } from '@quire/db';
import { insertDoc, publishRealtime, serializeDoc, setValues, type DocContext, type DocController, type DocData, type HookArgs } from '@quire/documents';
import { cstr, pythonJsonDumps, sanitizeHtml } from '@quire/frappe-compat';
import type { Meta } from '@quire/meta';

/**
 * Comment (frappe/core/doctype/comment/comment.py): a comment on a document, or a line of its
 * timeline (Assigned, Attachment, Like, …). Its content is sanitised before it is stored, since
 * every reader's desk renders it as HTML. A comment of type Comment is also kept, shortened, in the
 * referenced document's `_comments` column (the latest 100), which lists show as a count; the
 * document's form hears `docinfo_update` once the change commits.
 */

export const COMMENT = 'Comment';

/** The docinfo list each comment type belongs to (Comment.notify_change's key_map). */
const DOCINFO_KEY: Readonly<Record<string, string>> = {
  Like: 'like_logs',
  Assigned: 'assignment_logs',
  'Assignment Completed': 'assignment_logs',
  Comment: 'comments',
  Attachment: 'attachment_logs',
  'Attachment Removed': 'attachment_logs',
};

interface CachedComment {
  comment: string;
  by: string;
  name: string;
}

/** The referenced document's table, when it is one whose rows keep `_comments`. */
function referenceTable(ctx: DocContext, doc: DocData): Meta | undefined {
  const meta = ctx.meta.get(cstr(doc.reference_doctype));
  if (!meta || meta.issingle || meta.istable || meta.isVirtual || !meta.hasColumn('_comments') || !cstr(doc.reference_name)) return undefined;
  return meta;
}

async function cachedComments(q: Queryable, meta: Meta, name: string): Promise<CachedComment[] | undefined> {
  // Locked: two comments saved at once must not each write a list without the other.
  const { rows } = await q.query<{ _comments: string | null }>(`SELECT "_comments" FROM ${meta.table} WHERE "name" = $1 FOR UPDATE`, [name]);
  if (rows.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(rows[0]?._comments || '[]');
    return Array.isArray(parsed) ? (parsed as CachedComment[]) : [];
  } catch {
    return [];
  }
}

async function storeComments(q: Queryable, meta: Meta, name: string, comments: CachedComment[]): Promise<void> {
  // Written directly so that the document's `modified` stays as it was (Frappe does the same).
  await setValues(q, meta, name, { _comments: pythonJsonDumps(comments.slice(-100)) });
}

/** Python's `content[:97] + "..."` past 100 characters (code points, as Python counts them). */
function truncated(content: string): string {
  const chars = Array.from(content);
  return chars.length > 100 ? `${chars.slice(0, 97).join('')}...` : content;
}

/** update_comment_in_doc: the comment's shortened text added to (or changed in) `_comments`. */
async function keepInReference({ ctx, tx, doc }: HookArgs): Promise<void> {
  if (doc.comment_type !== 'Comment' || !cstr(doc.content)) return;
  const meta = referenceTable(ctx, doc);
  if (!meta) return;
  const reference = cstr(doc.reference_name);
  const comments = await cachedComments(tx, meta, reference);
  if (!comments) return;
  const existing = comments.find((c) => c.name === doc.name);
  if (existing) existing.comment = truncated(cstr(doc.content));
  else comments.push({ comment: truncated(cstr(doc.content)), by: cstr(doc.comment_email) || cstr(doc.owner), name: String(doc.name) });
  await storeComments(tx, meta, reference, comments);
}

async function dropFromReference({ ctx, tx, doc }: HookArgs): Promise<void> {
  const meta = referenceTable(ctx, doc);
  if (!meta) return;
  const reference = cstr(doc.reference_name);
  const comments = await cachedComments(tx, meta, reference);
  if (!comments || !comments.some((c) => c.name === doc.name)) return;
  await storeComments(
    tx,
    meta,
    reference,
    comments.filter((c) => c.name !== doc.name),
  );
}

/** Comment.notify_change: the document's open forms hear of the comment once it commits. */
function notifyChange({ ctx, tx, doc, meta }: HookArgs, action: 'add' | 'update' | 'delete'): void {
  const key = DOCINFO_KEY[cstr(doc.comment_type)];
  const doctype = cstr(doc.reference_doctype);
  if (!key || !doctype || !cstr(doc.reference_name)) return;
  const message = { doc: serializeDoc(ctx.meta, meta, doc, { includeNulls: true }), key, action };
  publishRealtime(ctx, 'docinfo_update', message, { doctype, docname: cstr(doc.reference_name) }, { afterCommit: tx });
}

export const controller: DocController = {
  validate({ doc, ctx }) {
    if (!cstr(doc.comment_email)) doc.comment_email = ctx.principal.user;
    if (typeof doc.content === 'string') doc.content = sanitizeHtml(doc.content);
  },

  async on_update(args) {
    await keepInReference(args);
    notifyChange(args, args.previous === undefined ? 'add' : 'update');
  },

  async on_trash(args) {
    await dropFromReference(args);
    notifyChange(args, 'delete');
  },
};

/**
 * Document.add_comment: a timeline line on a document (Assigned, Attachment, …), written with the
 * platform's rights in the caller's transaction (`ctx.db`), by the caller.
 */
export function addTimelineComment(ctx: DocContext, reference: { doctype: string; name: string }, commentType: string, text: string): Promise<DocData> {
  return insertDoc(
    ctx,
    COMMENT,
    {
      comment_type: commentType,
      comment_email: ctx.principal.user,
      reference_doctype: reference.doctype,
      reference_name: reference.name,
      content: text || commentType,
    },
    { ignorePermissions: true },
  );
}
