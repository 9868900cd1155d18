import { jobEnqueueing, type JobEnqueueing } from './jobs';
import { refuseVirtualWrite, virtualOf } from './virtual';
import type { Transaction } from '@quire/db';
import { DocstatusTransitionError, doesNotExist, TimestampMismatchError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import { nowDatetime, type Meta } from '@quire/meta';
import { checkPermission, hasPermission, ownerColumns, permittedLevels } from '@quire/permissions';
import type { DocContext, DocData, WriteFlags } from './context';
import type { HookName } from './controllers';
import { setNewName, validateName } from './naming';
import { forgetPasswords, storePasswords } from './passwords';
import { deferInsert, deferUpdate, deleteChildren, deleteRow, insertRows, selectDoc, selectRow, storedName, updateRow, writeSingle } from './storage';
import { checkLinks, checkMandatory, checkNoLinks, checkSetOnlyOnce, checkUpdateAfterSubmit, checkValues, refuseCancelledEdit } from './validation';
import { applyInput, copyDoc, newDoc, parseDocstatus, prepareChildren } from './values';
import { tracksChanges, VERSION_DOCTYPE, versionDiff, versionJson } from './versions';

/**
 * The document lifecycle (frappe/model/document.py): insert, save with docstatus transitions
 * (submit, update after submit, cancel), amend and delete. Each operation is one transaction:
 * the row, its child rows and whatever the hooks write commit together or not at all.
 */

type Action = 'save' | 'submit' | 'update_after_submit' | 'cancel';

const DOCSTATUS_LABEL = ['0 (Draft)', '1 (Submitted)', '2 (Cancelled)'];

interface Write {
  ctx: DocContext;
  tx: Transaction;
  meta: Meta;
  doc: DocData;
  previous: DocData | undefined;
  flags: WriteFlags;
  /** The hooks' enqueue and enqueueDoc (in the write's transaction), made at its first hook. */
  jobs?: JobEnqueueing;
}

async function hook(w: Write, name: HookName): Promise<void> {
  const { ctx } = w;
  w.jobs ??= jobEnqueueing(() => ctx);
  await ctx.controllers.run(name, { doc: w.doc, previous: w.previous, meta: w.meta, ctx, tx: w.tx, flags: w.flags, ...w.jobs });
}

function requireDoc(meta: Meta, name: unknown): string | number {
  const stored = storedName(meta, name);
  if (stored === undefined) throw doesNotExist(meta.name, String(name));
  return stored;
}

function stripHidden(ctx: DocContext, meta: Meta, doc: DocData): DocData {
  const { hidden } = permittedLevels(meta, ctx.principal);
  if (hidden.size === 0) return doc;
  return Object.fromEntries(Object.entries(doc).filter(([field]) => !hidden.has(field)));
}

/** The context operations nested in a write run with: everything through that write's transaction. */
function within(ctx: DocContext, tx: Transaction): DocContext {
  return ctx.db === tx ? ctx : { ...ctx, db: tx };
}

/** Installing standard records trusts them: no permission or link checks. */
function withDefaults(flags: WriteFlags): WriteFlags {
  return flags.installing ? { ...flags, ignorePermissions: true, ignoreLinks: true } : flags;
}

// ---------------------------------------------------------------- read

/** A document the caller may read, with its child rows; 404 when missing, 403 when not permitted. */
export async function getDoc(ctx: DocContext, doctype: string, name: unknown): Promise<DocData> {
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) {
    const doc = await virtualOf(ctx, meta, 'read').getDoc(ctx, String(name));
    if (!doc) throw doesNotExist(meta.name, String(name));
    return doc;
  }
  if (meta.istable) return getChildRow(ctx, meta, name);
  const doc = await selectDoc(ctx.db, ctx.meta, meta, meta.issingle ? meta.name : requireDoc(meta, name));
  if (!doc) throw doesNotExist(meta.name, String(name));
  if (meta.issingle) fillDefaults(ctx, meta, doc);
  checkPermission(meta, ctx.principal, 'read', doc);
  return stripHidden(ctx, meta, doc);
}

async function getChildRow(ctx: DocContext, meta: Meta, name: unknown): Promise<DocData> {
  const row = await selectRow(ctx.db, meta, requireDoc(meta, name));
  if (!row) throw doesNotExist(meta.name, String(name));
  const parentMeta = ctx.meta.require(String(row.parenttype));
  const parent = await selectRow(ctx.db, parentMeta, requireDoc(parentMeta, row.parent));
  if (!parent) throw doesNotExist(meta.name, String(name));
  checkPermission(parentMeta, ctx.principal, 'read', parent);
  row.doctype = meta.name;
  return row;
}

/** Whether a document exists (no permission check). */
export async function docExists(ctx: DocContext, doctype: string, name: unknown): Promise<boolean> {
  const meta = ctx.meta.require(doctype);
  const stored = storedName(meta, name);
  return stored !== undefined && (await selectRow(ctx.db, meta, stored)) !== undefined;
}

// ---------------------------------------------------------------- insert

/** Inserts a new document (POST /api/resource/<DocType>); `docstatus: 1` inserts and submits. */
export function insertDoc(ctx: DocContext, doctype: string, input: DocData, given: WriteFlags = {}): Promise<DocData> {
  const flags = withDefaults(given);
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) refuseVirtualWrite(meta);
  return ctx.db.transaction(async (tx) => {
    const inner = within(ctx, tx);
    if (meta.issingle) return saveSingle(inner, tx, meta, input, flags);
    if (meta.istable) return insertChild(inner, meta, input, flags);
    return insertIn(inner, tx, meta, input, flags);
  });
}

async function insertIn(ctx: DocContext, tx: Transaction, meta: Meta, input: DocData, flags: WriteFlags): Promise<DocData> {
  const principal = ctx.principal;
  const doc = newDoc(meta, principal);
  applyInput(meta, ctx.meta, doc, input, { principal });
  const docstatus = input.docstatus === undefined || input.docstatus === null ? 0 : parseDocstatus(input.docstatus);
  if (docstatus === 2) {
    throw new DocstatusTransitionError(`Cannot change docstatus from ${DOCSTATUS_LABEL[0]} to ${DOCSTATUS_LABEL[2]}`, { title: 'Invalid Action' });
  }
  doc.docstatus = docstatus;
  const action: Action = docstatus === 1 ? 'submit' : 'save';
  if (!flags.ignorePermissions) {
    checkPermission(meta, principal, 'create');
    if (action === 'submit') checkPermission(meta, principal, 'submit');
    resetUnwritableFields(ctx, meta, doc, undefined);
  }
  await ctx.quota?.beforeInsert(tx, meta.name, !flags.ignorePermissions);
  const now = nowDatetime();
  if (flags.keepTimestamps) {
    doc.owner = input.owner ?? principal.user;
    doc.creation = input.creation ?? now;
    doc.modified = input.modified ?? now;
    doc.modified_by = input.modified_by ?? principal.user;
  } else {
    Object.assign(doc, { owner: principal.user, creation: now, modified: now, modified_by: principal.user });
  }
  if (flags.name !== undefined) doc.name = flags.name;
  const w: Write = { ctx, tx, meta, doc, previous: undefined, flags };
  await hook(w, 'before_insert');
  await hook(w, 'before_naming');
  await hook(w, 'autoname');
  if (doc.amended_from) await checkAmendable(w);
  if (doc.name === undefined || doc.name === null || doc.name === '') {
    const requested = meta.namingRule === 'prompt' || meta.namingRule === 'uuid' ? (input.__newname ?? input.name) : undefined;
    await setNewName(tx, ctx.tenant.schema, meta, doc, requested);
  } else {
    validateName(meta, doc); // set by an autoname hook
  }
  prepareChildren(meta, doc, principal, now);
  await runBeforeSave(w, action);
  prepareChildren(meta, doc, principal, now);
  await validate(w);
  await storePasswords(tx, ctx.tenant.schema, ctx.secrets, ctx.meta, meta, doc);
  // Sent with the outbox rows the hooks below write, as one statement where nothing in between reads.
  deferInsert(tx, meta, doc);
  for (const f of meta.tableFields) {
    const child = ctx.meta.require(f.options ?? '');
    for (const row of doc[f.fieldname] as DocData[]) deferInsert(tx, child, row);
  }
  await hook(w, 'after_insert');
  await runAfterSave(w, action);
  return doc;
}

/** Amending: the original must be cancelled; the new name is `<original>-N` (naming.ts). */
async function checkAmendable(w: Write): Promise<void> {
  const original = await selectRow(w.tx, w.meta, requireDoc(w.meta, w.doc.amended_from));
  if (!original) throw doesNotExist(w.meta.name, String(w.doc.amended_from));
  if (original.docstatus !== 2) {
    throw new ValidationError(`${w.meta.name} ${String(w.doc.amended_from)} cannot be amended because it is not cancelled`, { title: 'Invalid Amendment' });
  }
  if (!w.flags.ignorePermissions) checkPermission(w.meta, w.ctx.principal, 'amend');
}

/** A child row inserted on its own (frappe.client.insert with parent fields) is appended through its parent. */
async function insertChild(ctx: DocContext, meta: Meta, input: DocData, flags: WriteFlags): Promise<DocData> {
  const { parent } = input;
  const parenttype = cstr(input.parenttype);
  const parentfield = cstr(input.parentfield);
  if (!parent || !parenttype || !parentfield) {
    throw new ValidationError('Parenttype, Parent and Parentfield are required to insert a child record', { title: 'Missing Parent' });
  }
  const parentMeta = ctx.meta.require(parenttype);
  if (parentMeta.childDoctypeOf(parentfield) !== meta.name) {
    throw new ValidationError(`${parentfield} of ${parentMeta.name} is not a table of ${meta.name}`, { title: 'Invalid Parent' });
  }
  const current = await getDoc(ctx, parentMeta.name, parent);
  const rows = [...((current[parentfield] as DocData[] | undefined) ?? []), stripParentKeys(input)];
  return updateDoc(ctx, parentMeta.name, parent, { [parentfield]: rows }, flags);
}

function stripParentKeys(input: DocData): DocData {
  const { parent: _p, parenttype: _t, parentfield: _f, name: _n, ...rest } = input;
  return rest;
}

// ---------------------------------------------------------------- save

/**
 * Merges `patch` into the stored document and saves it (PUT /api/resource/<DocType>/<name>).
 * `docstatus` 1 submits a draft, 2 cancels a submitted document; `modified`, when sent, must equal
 * the stored value (optimistic locking). A Table field in the patch replaces the rows.
 */
export function updateDoc(ctx: DocContext, doctype: string, name: unknown, patch: DocData, given: WriteFlags = {}): Promise<DocData> {
  const flags = withDefaults(given);
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) refuseVirtualWrite(meta);
  return ctx.db.transaction(async (tx) => {
    const inner = within(ctx, tx);
    if (meta.issingle) return saveSingle(inner, tx, meta, patch, flags);
    if (meta.istable) return updateChild(inner, meta, name, patch, flags);
    const previous = await selectDoc(tx, ctx.meta, meta, requireDoc(meta, name), true);
    if (!previous) throw doesNotExist(meta.name, String(name));
    flags.precondition?.(previous);
    return saveIn(inner, tx, meta, previous, patch, flags);
  });
}

async function saveIn(ctx: DocContext, tx: Transaction, meta: Meta, previous: DocData, patch: DocData, flags: WriteFlags): Promise<DocData> {
  const principal = ctx.principal;
  checkTimestamp(meta, previous, patch);
  const doc: DocData = copyDoc(previous);
  applyInput(meta, ctx.meta, doc, patch, { principal, previous });
  const from = Number(previous.docstatus) as 0 | 1 | 2;
  const to = patch.docstatus === undefined || patch.docstatus === null ? from : parseDocstatus(patch.docstatus);
  const action = transition(from, to);
  doc.docstatus = to;
  if (!flags.ignorePermissions) {
    checkPermission(meta, principal, 'write', previous);
    if (action === 'submit' || action === 'update_after_submit') checkPermission(meta, principal, 'submit', previous);
    if (action === 'cancel') checkPermission(meta, principal, 'cancel', previous);
    resetUnwritableFields(ctx, meta, doc, previous);
  }
  if (action === 'update_after_submit' || action === 'cancel') checkUpdateAfterSubmit(meta, ctx.meta, previous, doc);
  if (action === 'save') checkSetOnlyOnce(meta, previous, doc);
  const now = nowDatetime();
  doc.modified = now;
  doc.modified_by = principal.user;
  prepareChildren(meta, doc, principal, now);
  const w: Write = { ctx, tx, meta, doc, previous, flags };
  await runBeforeSave(w, action);
  prepareChildren(meta, doc, principal, now);
  if (action !== 'cancel') await validate(w);
  if (action === 'cancel') await checkNoLinks(tx, ctx.meta, meta, doc.name as string | number, 'cancel');
  await storePasswords(tx, ctx.tenant.schema, ctx.secrets, ctx.meta, meta, doc);
  deferUpdate(tx, meta, doc);
  await syncChildren(w);
  await runAfterSave(w, action);
  return doc;
}

function checkTimestamp(meta: Meta, previous: DocData, patch: DocData): void {
  const sent = patch.modified;
  if (sent === undefined || sent === null || sent === '') return;
  // An exact string compare, as Frappe's cstr(db.modified) != cstr(sent): anything but that string is stale.
  if (typeof sent !== 'string' || sent !== String(previous.modified)) {
    throw new TimestampMismatchError(
      `Error: ${cstr(previous.name)} (${meta.name}) has been modified after you have opened it (${cstr(previous.modified)}, ${cstr(sent)}). Please refresh to get the latest document.`,
      { title: 'Document Modified' },
    );
  }
}

/** Frappe's check_docstatus_transition: the action a change of docstatus means, or a 417. */
function transition(from: 0 | 1 | 2, to: 0 | 1 | 2): Action {
  if (from === 2) refuseCancelledEdit();
  if (from === 0 && to === 0) return 'save';
  if (from === 0 && to === 1) return 'submit';
  if (from === 1 && to === 1) return 'update_after_submit';
  if (from === 1 && to === 2) return 'cancel';
  throw new DocstatusTransitionError(`Cannot change docstatus from ${DOCSTATUS_LABEL[from]} to ${DOCSTATUS_LABEL[to]}`, { title: 'Invalid Action' });
}

async function syncChildren(w: Write): Promise<void> {
  const { tx, meta, doc, ctx } = w;
  for (const f of meta.tableFields) {
    const child = ctx.meta.require(f.options ?? '');
    const rows = (doc[f.fieldname] as DocData[] | undefined) ?? [];
    const before = new Set(((w.previous?.[f.fieldname] as DocData[] | undefined) ?? []).map((r) => String(r.name)));
    const kept = rows.filter((r) => before.has(String(r.name)));
    await deleteChildren(
      tx,
      meta,
      child,
      f.fieldname,
      doc.name as string | number,
      kept.map((r) => String(r.name)),
    );
    for (const row of kept) await updateRow(tx, child, row);
    await insertRows(
      tx,
      child,
      rows.filter((r) => !before.has(String(r.name))),
    );
  }
}

/** A child row changed on its own is saved through its parent, as Frappe does. */
async function updateChild(ctx: DocContext, meta: Meta, name: unknown, patch: DocData, flags: WriteFlags): Promise<DocData> {
  const row = await selectRow(ctx.db, meta, requireDoc(meta, name));
  if (!row) throw doesNotExist(meta.name, String(name));
  const parentMeta = ctx.meta.require(String(row.parenttype));
  const parent = await getDoc(ctx, parentMeta.name, row.parent);
  const field = String(row.parentfield);
  const rows = ((parent[field] as DocData[] | undefined) ?? []).map((r) =>
    String(r.name) === String(row.name) ? { ...r, ...stripParentKeys(patch), name: r.name } : r,
  );
  await updateDoc(ctx, parentMeta.name, row.parent, { [field]: rows }, flags);
  return getChildRow(ctx, meta, name);
}

// ---------------------------------------------------------------- singles

async function saveSingle(ctx: DocContext, tx: Transaction, meta: Meta, patch: DocData, flags: WriteFlags): Promise<DocData> {
  const previous = await selectDoc(tx, ctx.meta, meta, meta.name, true);
  if (!previous) throw doesNotExist(meta.name, meta.name);
  flags.precondition?.(previous);
  fillDefaults(ctx, meta, previous);
  checkTimestamp(meta, previous, patch);
  const doc: DocData = copyDoc(previous);
  applyInput(meta, ctx.meta, doc, patch, { principal: ctx.principal, previous });
  if (!flags.ignorePermissions) {
    checkPermission(meta, ctx.principal, 'write');
    resetUnwritableFields(ctx, meta, doc, previous);
  }
  const now = nowDatetime();
  doc.modified = now;
  doc.modified_by = ctx.principal.user;
  doc.creation ??= now;
  prepareChildren(meta, doc, ctx.principal, now);
  const w: Write = { ctx, tx, meta, doc, previous, flags };
  await runBeforeSave(w, 'save');
  prepareChildren(meta, doc, ctx.principal, now);
  await validate(w);
  await storePasswords(tx, ctx.tenant.schema, ctx.secrets, ctx.meta, meta, doc);
  await writeSingle(tx, meta, doc);
  await syncChildren(w);
  await runAfterSave(w, 'save');
  return doc;
}

// ---------------------------------------------------------------- delete

/** Deletes a document (DELETE /api/resource/<DocType>/<name>): refused when submitted or linked. */
export function deleteDoc(ctx: DocContext, doctype: string, name: unknown, given: WriteFlags = {}): Promise<void> {
  const flags = withDefaults(given);
  const meta = ctx.meta.require(doctype);
  if (meta.isVirtual) return deleteVirtual(ctx, meta, String(name));
  return ctx.db.transaction(async (tx) => {
    const ctxIn = within(ctx, tx);
    if (meta.issingle) throw new ValidationError(`${meta.name} is a Single DocType and cannot be deleted`, { title: 'Not Allowed' });
    if (meta.istable) {
      await deleteChild(ctxIn, meta, name, flags);
      return;
    }
    const previous = await selectDoc(tx, ctx.meta, meta, requireDoc(meta, name), true);
    if (!previous) throw doesNotExist(meta.name, String(name));
    flags.precondition?.(previous);
    if (!flags.ignorePermissions) checkPermission(meta, ctx.principal, 'delete', previous);
    if (previous.docstatus === 1) {
      throw new ValidationError(`${meta.name} ${String(previous.name)}: Submitted Record cannot be deleted. You must Cancel it first.`, {
        title: 'Not Allowed',
      });
    }
    await checkNoLinks(tx, ctx.meta, meta, previous.name as string | number, 'delete');
    const w: Write = { ctx: ctxIn, tx, meta, doc: previous, previous, flags };
    await hook(w, 'on_trash');
    for (const f of meta.tableFields) {
      await deleteChildren(tx, meta, ctx.meta.require(f.options ?? ''), f.fieldname, previous.name as string | number);
    }
    await deleteRow(tx, meta, previous.name as string | number);
    await forgetPasswords(tx, ctx.tenant.schema, meta, String(previous.name));
    await hook(w, 'after_delete');
    notifyChanged(w);
  });
}

async function deleteChild(ctx: DocContext, meta: Meta, name: unknown, flags: WriteFlags): Promise<void> {
  const row = await selectRow(ctx.db, meta, requireDoc(meta, name));
  if (!row) throw doesNotExist(meta.name, String(name));
  const parentMeta = ctx.meta.require(String(row.parenttype));
  const parent = await getDoc(ctx, parentMeta.name, row.parent);
  const field = String(row.parentfield);
  const rows = ((parent[field] as DocData[] | undefined) ?? []).filter((r) => String(r.name) !== String(row.name));
  await updateDoc(ctx, parentMeta.name, row.parent, { [field]: rows }, flags);
}

// ---------------------------------------------------------------- shared steps

async function runBeforeSave(w: Write, action: Action): Promise<void> {
  if (action === 'save' || action === 'submit') {
    await hook(w, 'before_validate');
    await hook(w, 'validate');
  }
  const before: Record<Action, HookName> = {
    save: 'before_save',
    submit: 'before_submit',
    cancel: 'before_cancel',
    update_after_submit: 'before_update_after_submit',
  };
  await hook(w, before[action]);
}

async function runAfterSave(w: Write, action: Action): Promise<void> {
  if (action === 'save' || action === 'submit') await hook(w, 'on_update');
  if (action === 'submit') await hook(w, 'on_submit');
  if (action === 'cancel') await hook(w, 'on_cancel');
  if (action === 'update_after_submit') await hook(w, 'on_update_after_submit');
  await saveVersion(w);
  await hook(w, 'on_change');
  notifyChanged(w);
}

/** Frappe's save_version: what a save changed, kept as a Version written with the platform's rights. */
async function saveVersion({ ctx, meta, doc, previous, flags }: Write): Promise<void> {
  if (previous === undefined || !tracksChanges(ctx, meta, flags)) return;
  const diff = versionDiff(ctx.meta, meta, previous, doc);
  if (!diff) return;
  const version = { ref_doctype: meta.name, docname: String(doc.name), data: versionJson(diff) };
  await insertDoc(ctx, VERSION_DOCTYPE, version, { ignorePermissions: true, ignoreLinks: true });
}

/** Frappe's notify_update: sockets subscribed to the document or its DocType hear of it once the write commits. */
function notifyChanged({ ctx, tx, meta, doc, previous, flags }: Write): void {
  if (flags.installing || meta.istable) return;
  ctx.changes.documentChanged(tx, ctx.tenant, {
    doctype: meta.name,
    name: String(doc.name),
    modified: String(doc.modified),
    owners: ownersOf(meta, doc, previous),
    user: ctx.principal.user,
    list: !meta.issingle && meta.definition.read_only !== 1,
  });
}

/** Whose document it is for `if_owner` rights, now or before this change (a reassigned ToDo leaves the old assignee's list). */
function ownersOf(meta: Meta, doc: DocData, previous: DocData | undefined): string[] {
  const owners = new Set<string>();
  for (const row of previous ? [doc, previous] : [doc]) {
    for (const column of ownerColumns(meta)) {
      const user = cstr(row[column]);
      if (user !== '') owners.add(user);
    }
  }
  return [...owners];
}

async function validate(w: Write): Promise<void> {
  const { meta, ctx, doc, tx, flags } = w;
  checkValues(meta, ctx.meta, doc);
  if (!flags.ignoreMandatory) checkMandatory(meta, ctx.meta, doc);
  if (!flags.ignoreLinks) await checkLinks(tx, meta, ctx.meta, doc);
}

/** A Single's fields never saved read as their defaults (Frappe's load_from_db on a Single). */
function fillDefaults(ctx: DocContext, meta: Meta, doc: DocData): void {
  let defaults: DocData | undefined;
  for (const f of meta.dataFields) {
    if (doc[f.fieldname] !== undefined) continue;
    defaults ??= newDoc(meta, ctx.principal);
    doc[f.fieldname] = defaults[f.fieldname];
  }
}

/** Fields at permlevels the caller cannot write keep their stored (or default) value. */
function resetUnwritableFields(ctx: DocContext, meta: Meta, doc: DocData, previous: DocData | undefined): void {
  const { write } = permittedLevels(meta, ctx.principal);
  if (write.size === 1 && meta.fields.every((f) => (f.permlevel ?? 0) === 0)) return;
  const fresh = previous ?? newDoc(meta, ctx.principal);
  for (const f of meta.fields) {
    if (!write.has(f.permlevel ?? 0) && f.fieldname in fresh) doc[f.fieldname] = structuredClone(fresh[f.fieldname]);
  }
}

/** True when the caller may read this document (used by list-adjacent helpers). */
export function canRead(ctx: DocContext, meta: Meta, doc: DocData): boolean {
  return hasPermission(meta, ctx.principal, 'read', doc);
}

async function deleteVirtual(ctx: DocContext, meta: Meta, name: string): Promise<void> {
  const source = virtualOf(ctx, meta, 'delete');
  if (!source.deleteDoc) refuseVirtualWrite(meta);
  if (!(await source.getDoc(ctx, name))) throw doesNotExist(meta.name, name);
  await source.deleteDoc(ctx, name);
}
