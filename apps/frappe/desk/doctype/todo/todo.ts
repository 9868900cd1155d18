import type { Queryable } from '@quire/db';
import { setValues, type DocController, type DocData, type HookArgs } from '@quire/documents';
import { cstr, pythonJsonDumps } from '@quire/frappe-compat';
import type { Meta } from '@quire/meta';
import { addTimelineComment } from '../../../core/doctype/comment/comment';

/**
 * ToDo (frappe/desk/doctype/todo/todo.py), as an assignment: a ToDo that refers to a document keeps
 * that document's `_assign` (the users with an open ToDo on it, oldest first) and writes its
 * timeline's "Assigned" and "Assignment Completed" comments.
 */

export const TODO = 'ToDo';

const CLOSED_STATUSES = ['Cancelled', 'Closed'];

/** frappe.utils.get_fullname: the user's full name, or the user id. */
export async function fullName(q: Queryable, meta: Meta | undefined, user: string): Promise<string> {
  if (!meta) return user;
  const { rows } = await q.query<{ full_name: string | null }>(`SELECT "full_name" FROM ${meta.table} WHERE "name" = $1`, [user]);
  return rows[0]?.full_name || user;
}

function referenceOf(doc: DocData): { doctype: string; name: string } | undefined {
  const doctype = cstr(doc.reference_type);
  const name = cstr(doc.reference_name);
  return doctype && name ? { doctype, name } : undefined;
}

/** The timeline line this save means: a new assignment, or one whose status changed. */
async function assignmentComment({ doc, previous, ctx, tx }: HookArgs): Promise<{ text: string; type: string } | undefined> {
  const users = ctx.meta.get('User');
  const description = cstr(doc.description);
  if (previous === undefined) {
    const by = cstr(doc.assigned_by);
    const to = cstr(doc.allocated_to);
    if (by === to) return { text: `${await fullName(tx, users, by)} self assigned this task: ${description}`, type: 'Assigned' };
    return { text: `${await fullName(tx, users, by)} assigned ${await fullName(tx, users, to)}: ${description}`, type: 'Assigned' };
  }
  if (cstr(previous.status) === cstr(doc.status)) return undefined;
  const me = ctx.principal.user;
  if (cstr(doc.allocated_to) === me) return { text: `${await fullName(tx, users, me)} removed their assignment.`, type: 'Assignment Completed' };
  return {
    text: `Assignment of ${await fullName(tx, users, cstr(doc.allocated_to))} removed by ${await fullName(tx, users, me)}`,
    type: 'Assignment Completed',
  };
}

/** update_in_reference: the referenced document's `_assign`, from its open ToDos, without touching its `modified`. */
export async function updateAssignedTo({ ctx, tx, meta }: Pick<HookArgs, 'ctx' | 'tx' | 'meta'>, reference: { doctype: string; name: string }): Promise<void> {
  const target = ctx.meta.get(reference.doctype);
  if (!target || target.issingle || target.istable || target.isVirtual || !target.hasColumn('_assign')) return;
  // Assignments of one document made at once wait for each other here, so that each list is read
  // after the other's ToDo has committed and none of them is lost.
  const locked = await tx.query(`SELECT 1 FROM ${target.table} WHERE "name" = $1 FOR UPDATE`, [reference.name]);
  if (locked.rows.length === 0) return;
  const { rows } = await tx.query<{ allocated_to: string }>(
    `SELECT "allocated_to" FROM ${meta.table}
     WHERE "reference_type" = $1 AND "reference_name" = $2 AND "status" <> ALL($3::text[]) AND COALESCE("allocated_to", '') <> ''
     ORDER BY "creation", "name"`,
    [reference.doctype, reference.name, CLOSED_STATUSES],
  );
  const assigned = [...new Set(rows.map((r) => r.allocated_to))];
  await setValues(tx, target, reference.name, { _assign: pythonJsonDumps(assigned) });
}

export const controller: DocController = {
  async on_update(args) {
    const reference = referenceOf(args.doc);
    if (!reference) return;
    const comment = await assignmentComment(args);
    if (comment) await addTimelineComment({ ...args.ctx, db: args.tx }, reference, comment.type, comment.text);
    await updateAssignedTo(args, reference);
  },

  // After the row is gone, so that the list no longer counts it.
  async after_delete(args) {
    const reference = referenceOf(args.doc);
    if (reference) await updateAssignedTo(args, reference);
  },
};
