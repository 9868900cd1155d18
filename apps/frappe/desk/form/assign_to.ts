import { whitelist, type MethodArgs, type MethodContext } from '@quire/apps';
import { loadPrincipal } from '@quire/auth';
import { getDoc, insertDoc, updateDoc, type DocContext, type DocData } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { decodeJsonArg, isPlainObject } from '@quire/frappe-compat';
import { today } from '@quire/meta';
import { hasPermission } from '@quire/permissions';
import { TODO } from '../doctype/todo/todo';
import { platformList } from './platform-reads';

/**
 * frappe.desk.form.assign_to: assigning a document to users makes one open ToDo per user (the ToDo
 * controller keeps the document's `_assign` and writes the timeline's "Assigned" comment), and
 * removing an assignment cancels that ToDo. The caller must be able to read the document; a user
 * who may not read it cannot be assigned (Frappe shares the document then, or refuses when sharing
 * is off; Quire has no sharing, so it refuses). The ToDos are written with the platform's rights.
 */

interface Target {
  doctype: string;
  name: string;
}

function missing(key: string): never {
  throw new ValidationError(`${key} is required`, { title: 'Missing Argument' });
}

/** Frappe's methods take `args` (a dict, or its JSON) or the form's fields themselves. */
function argsOf(args: MethodArgs): MethodArgs {
  if (args.args === undefined || args.args === null || args.args === '') return args;
  const decoded = decodeJsonArg('args', args.args);
  if (!isPlainObject(decoded)) throw new ValidationError('args must be a JSON object', { title: 'Invalid Request' });
  return decoded;
}

function textArg(args: MethodArgs, key: string): string {
  const value = args[key];
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value === '') missing(key);
  return value;
}

function targetOf(args: MethodArgs): Target {
  return { doctype: textArg(args, 'doctype'), name: textArg(args, 'name') };
}

/** A list of user ids or document names: a JSON list, a list, or one (numbers are autoincrement names). */
function listArg(value: unknown, key: string): string[] {
  if (value === undefined || value === null || value === '') return [];
  const decoded = typeof value === 'string' && !value.trimStart().startsWith('[') ? [value] : decodeJsonArg(key, value);
  const list = (Array.isArray(decoded) ? decoded : [decoded]).map((v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v));
  if (list.some((v) => typeof v !== 'string' || v === '')) throw new ValidationError(`${key} must be a list of names`, { title: 'Invalid Request' });
  return [...new Set(list as string[])];
}

/** The document, read as the caller: 404 when missing, 403 when they may not read it. */
function readTarget(ctx: DocContext, target: Target): Promise<DocData> {
  return getDoc(ctx, target.doctype, target.name);
}

/** get(args): the document's assignments that are neither cancelled nor closed, `[{owner, name}]` (five at most). */
function assignmentsOf(ctx: DocContext, target: Target, maxPageLength: number): Promise<unknown[]> {
  return platformList(
    ctx,
    TODO,
    {
      fields: ['allocated_to as owner', 'name'],
      filters: { reference_type: target.doctype, reference_name: target.name, status: ['not in', ['Cancelled', 'Closed']] },
      order_by: 'creation asc',
      limit_page_length: 5,
    },
    maxPageLength,
  );
}

/** The user's open ToDo on the document, if any. */
async function openTodo(ctx: DocContext, target: Target, user: string, maxPageLength: number, status: unknown = 'Open'): Promise<string | undefined> {
  const rows = await platformList(
    ctx,
    TODO,
    { fields: ['name'], filters: { reference_type: target.doctype, reference_name: target.name, allocated_to: user, status }, limit_page_length: 1 },
    maxPageLength,
  );
  return rows[0] === undefined ? undefined : String(rows[0].name);
}

const userList = (users: string[]): string => `<br><br>${users.join('<br>')}`;

/** Frappe's description when none is given (or it holds no text). */
function descriptionOf(args: MethodArgs, target: Target): string {
  const given = typeof args.description === 'string' ? args.description : '';
  const hasContent = given.replace(/<[^>]*>/g, '').trim() !== '' || given.includes('<img');
  return hasContent ? given : `Assignment for ${target.doctype} ${target.name}`;
}

/** Assigns one document in the caller's transaction (`ctx.db`); the users who already had it. */
async function assign(ctx: DocContext, method: MethodContext, args: MethodArgs, target: Target, users: string[]): Promise<string[]> {
  const doc = await readTarget(ctx, target);
  const meta = ctx.meta.require(target.doctype);
  // One assignment of a document at a time: the next one's duplicate check sees this one's ToDos.
  if (!meta.issingle && !meta.isVirtual) await ctx.db.query(`SELECT 1 FROM ${meta.table} WHERE "name" = $1 FOR UPDATE`, [doc.name]);
  const duplicates: string[] = [];
  for (const user of users) {
    if (await openTodo(ctx, target, user, method.settings.maxPageLength)) {
      duplicates.push(user);
      continue;
    }
    // The ToDo first, so that an unknown user is refused as Frappe refuses it (its Link to User).
    await insertDoc(
      ctx,
      TODO,
      {
        allocated_to: user,
        reference_type: meta.name,
        reference_name: String(doc.name),
        description: descriptionOf(args, target),
        priority: typeof args.priority === 'string' && args.priority !== '' ? args.priority : 'Medium',
        status: 'Open',
        date: typeof args.date === 'string' && args.date !== '' ? args.date : today(),
        assigned_by: ctx.principal.user,
        assignment_rule: typeof args.assignment_rule === 'string' ? args.assignment_rule : null,
      },
      { ignorePermissions: true },
    );
    const assignee = await loadPrincipal(ctx.db, ctx.tenant.schema, user);
    if (!assignee || !hasPermission(meta, assignee, 'read', doc)) {
      throw new ValidationError(
        `User <strong>${user}</strong> is not permitted to access this document.<br>As document sharing is disabled, please give them the required permissions before assigning.`,
        { title: 'Missing Permission' },
      );
    }
    if (meta.field('assigned_to') && meta.hasColumn('assigned_to'))
      await updateDoc(ctx, meta.name, doc.name, { assigned_to: user }, { ignorePermissions: true });
  }
  return duplicates;
}

function inTransaction<T>(ctx: DocContext, fn: (inner: DocContext) => Promise<T>): Promise<T> {
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx }));
}

function assignees(args: MethodArgs, caller: string): string[] {
  const users = listArg(args.assign_to, 'assign_to');
  // The desk's "Assign to me".
  if (args.assign_to_me === true || args.assign_to_me === 1 || args.assign_to_me === '1' || args.assign_to_me === 'true') users.push(caller);
  return [...new Set(users)];
}

/** add(args): assigns the document to each user of `assign_to`; the document's assignments. */
export const add = whitelist(
  async (raw, ctx) => {
    const args = argsOf(raw);
    const target = targetOf(args);
    const users = assignees(args, ctx.doc.principal.user);
    const duplicates = await inTransaction(ctx.doc, (inner) => assign(inner, ctx, args, target, users));
    if (duplicates.length > 0) ctx.response.msgprint(`Already in the following Users ToDo list:${userList(duplicates)}`);
    return assignmentsOf(ctx.doc, target, ctx.settings.maxPageLength);
  },
  { methods: ['POST', 'PUT'], summary: 'Assigns a document to users (one ToDo each)' },
);

/** add_multiple(args): the same assignment for each document named in `name` (a JSON list); answers nothing. */
export const add_multiple = whitelist(
  async (raw, ctx) => {
    const args = argsOf(raw);
    const doctype = textArg(args, 'doctype');
    const names = listArg(args.name, 'name');
    if (names.length === 0) missing('name');
    const users = assignees(args, ctx.doc.principal.user);
    const duplicates = await inTransaction(ctx.doc, async (inner) => {
      const all = new Set<string>();
      for (const name of names) for (const user of await assign(inner, ctx, args, { doctype, name }, users)) all.add(user);
      return [...all];
    });
    if (duplicates.length > 0) ctx.response.msgprint(`Already in the following Users ToDo list:${userList(duplicates)}`);
    return undefined;
  },
  { methods: ['POST', 'PUT'], summary: 'Assigns several documents of a DocType to users' },
);

/** remove(doctype, name, assign_to): the user's ToDo on the document is cancelled; the remaining assignments. */
export const remove = whitelist(
  async (raw, ctx) => {
    const args = argsOf(raw);
    const target = targetOf(args);
    const user = textArg(args, 'assign_to');
    await inTransaction(ctx.doc, async (inner) => {
      await readTarget(inner, target);
      const todo = await openTodo(inner, target, user, ctx.settings.maxPageLength, ['!=', 'Cancelled']);
      if (todo) await updateDoc(inner, TODO, todo, { status: 'Cancelled' }, { ignorePermissions: true });
    });
    return assignmentsOf(ctx.doc, target, ctx.settings.maxPageLength);
  },
  { methods: ['POST', 'PUT', 'DELETE'], summary: 'Removes a user’s assignment of a document' },
);

/** get(args): the document's open assignments, `[{owner, name}]`, for a caller who may read it. */
export const get = whitelist(
  async (raw, ctx) => {
    const target = targetOf(argsOf(raw));
    await readTarget(ctx.doc, target);
    return assignmentsOf(ctx.doc, target, ctx.settings.maxPageLength);
  },
  { methods: ['GET', 'POST'], allowScopedTokens: true, summary: 'The users a document is assigned to' },
);
