import { whitelist, type MethodArgs } from '@quire/apps';
import { getDoc, insertDoc, serializeDoc, updateDoc, type DocContext, type DocData } from '@quire/documents';
import { PermissionError, ValidationError } from '@quire/errors';
import { ADMINISTRATOR } from '@quire/permissions';
import { COMMENT } from '../../core/doctype/comment/comment';

/**
 * frappe.desk.form.utils: comments on a document from its form. Anyone who may read a document may
 * comment on it; only a comment's owner (or Administrator) may edit it. Comments are written with
 * the platform's rights (a reader holds no right on Comment itself) and sanitised by Comment's
 * controller.
 */

function text(args: MethodArgs, key: string): string {
  const value = args[key];
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value === '') throw new ValidationError(`${key} is required`, { title: 'Missing Argument' });
  return value;
}

function optionalText(args: MethodArgs, key: string): string | null {
  const value = args[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `comment.as_dict()`: every field, nulls included. */
function asDict(ctx: DocContext, doc: DocData): DocData {
  return serializeDoc(ctx.meta, ctx.meta.require(COMMENT), doc, { includeNulls: true });
}

/**
 * add_comment(reference_doctype, reference_name, content, comment_email, comment_by): the new
 * Comment. The commenter is always the caller: `comment_email` names them whatever is sent (Frappe's
 * desk sends the session user), so no one comments in another's name.
 */
export const add_comment = whitelist(
  async (args, ctx) => {
    const doctype = text(args, 'reference_doctype');
    const name = text(args, 'reference_name');
    const content = text(args, 'content');
    // 404 when it does not exist, 403 when the caller may not read it.
    const reference = await getDoc(ctx.doc, doctype, name);
    const comment = await insertDoc(
      ctx.doc,
      COMMENT,
      {
        comment_type: 'Comment',
        reference_doctype: doctype,
        reference_name: String(reference.name),
        reference_owner: reference.owner ?? null,
        comment_email: ctx.doc.principal.user,
        comment_by: optionalText(args, 'comment_by'),
        content,
        ip_address: ctx.request.ip || null,
      },
      { ignorePermissions: true },
    );
    return asDict(ctx.doc, comment);
  },
  { methods: ['POST', 'PUT'], summary: 'Adds a comment to a document the caller may read' },
);

/** update_comment(name, content): the owner (or Administrator) changes a comment's text; answers nothing. */
export const update_comment = whitelist(
  async (args, ctx) => {
    const name = text(args, 'name');
    const content = text(args, 'content');
    const user = ctx.doc.principal.user;
    // 403 for someone else's comment they may not read either; the owner check below for the rest.
    const current = await getDoc(ctx.doc, COMMENT, name);
    if (user !== ADMINISTRATOR && user !== current.owner) {
      throw new PermissionError('Comment can only be edited by the owner', { title: 'Not Permitted' });
    }
    await updateDoc(ctx.doc, COMMENT, name, { content }, { ignorePermissions: true });
    return undefined;
  },
  { methods: ['POST', 'PUT'], summary: 'Changes the text of one of the caller’s comments' },
);
