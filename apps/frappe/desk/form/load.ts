import { whitelist } from '@quire/apps';
import { PermissionError, ValidationError } from '@quire/errors';
import { cstr } from '@quire/frappe-compat';
import { docExists, getDoc, metaDict, serializeDoc, VERSION_DOCTYPE, type DocContext, type DocData } from '@quire/documents';
import { RIGHTS, type Meta, type Right, type TenantMeta } from '@quire/meta';
import { grantsOf, hasPermission, permittedLevels, readScope, type Principal } from '@quire/permissions';
import { COMMENT } from '../../core/doctype/comment/comment';
import { readableVersionData } from '../../core/doctype/version/version';
import { linkTitles } from '../search';
import { platformList } from './platform-reads';

/**
 * frappe.desk.form.load.getdoctype(doctype): the metadata a form or list is drawn from. As in
 * Frappe, the answer is in `docs` (not `message`): the DocType first, then the child DocTypes of
 * its Table fields. Fields the caller may not read (permlevel) are left out. Each doc also carries
 * `__perm`, the caller's rights (Frappe's desk works these out from `frappe.boot.user`, which Quire
 * has no boot for): document-level rights and the permlevels whose fields the caller may write.
 */

export interface DeskPermissions {
  rights: Record<Right, boolean>;
  /** Permlevels the caller may write; a field at any other level is read-only to them. */
  write_levels: number[];
}

function doctypeArg(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  return value;
}

/** The caller's rights on `meta`, whose documents' rights come from `owner` (the parent, for a child table). */
function permissionsOf(meta: Meta, owner: Meta, principal: Principal): DeskPermissions {
  const grants = grantsOf(owner, principal);
  const rights = Object.fromEntries(RIGHTS.map((r) => [r, grants[r] !== false])) as Record<Right, boolean>;
  return { rights, write_levels: [...permittedLevels(meta, principal).write].sort((a, b) => a - b) };
}

/** The DocType as Frappe's meta dict (the readable fields), with the caller's rights. */
function describe(meta: Meta, owner: Meta, principal: Principal): Record<string, unknown> {
  return { ...metaDict(meta, principal), __perm: permissionsOf(meta, owner, principal) };
}

/** A child DocType is readable through a parent the caller may read. */
function readableThrough(tenant: TenantMeta, meta: Meta, principal: Principal): Meta | undefined {
  if (!meta.istable) return readScope(meta, principal) === false ? undefined : meta;
  return tenant.parentsOf(meta.name).find((parent) => readScope(parent, principal) !== false);
}

export const getdoctype = whitelist(
  (args, ctx) => {
    const { meta: tenant, principal } = ctx.doc;
    const meta = tenant.require(doctypeArg(args.doctype));
    const owner = readableThrough(tenant, meta, principal);
    if (!owner) throw new PermissionError(`No permission for ${meta.name}`, { title: 'Not Permitted' });
    const docs = [describe(meta, owner, principal)];
    for (const field of meta.tableFields) {
      const child = field.options ? tenant.get(field.options) : undefined;
      if (child && !docs.some((d) => d.name === child.name)) docs.push(describe(child, owner, principal));
    }
    ctx.response.set('docs', docs);
  },
  { methods: ['GET'], allowScopedTokens: true },
);

// ------------------------------------------------------------------------------------ getdoc, get_docinfo

function nameArg(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value === '') throw new ValidationError('name is required', { title: 'Missing Argument' });
  return value;
}

type Row = Record<string, unknown>;

/** Comment types by the docinfo list they go to (load.py add_comments). */
const COMMENT_LISTS: Readonly<Record<string, string>> = {
  Comment: 'comments',
  Shared: 'shared',
  Unshared: 'shared',
  Assigned: 'assignment_logs',
  'Assignment Completed': 'assignment_logs',
  Attachment: 'attachment_logs',
  'Attachment Removed': 'attachment_logs',
  Info: 'info_logs',
  Edit: 'info_logs',
  Label: 'info_logs',
  Like: 'like_logs',
  Workflow: 'workflow_logs',
};

/** get_doc_permissions: the caller's rights on this document, as 1 and 0. */
function docPermissions(meta: Meta, principal: Principal, doc: DocData): Record<Right, number> {
  return Object.fromEntries(RIGHTS.map((r) => [r, hasPermission(meta, principal, r, doc) ? 1 : 0])) as Record<Right, number>;
}

/** frappe.utils.add_user_info for each user named in the docinfo. */
async function userInfo(ctx: DocContext, users: Iterable<unknown>, maxPageLength: number): Promise<Record<string, Row>> {
  const names = [...new Set([...users].filter((u): u is string => typeof u === 'string' && u !== ''))];
  const info: Record<string, Row> = {};
  if (names.length === 0) return info;
  const rows = await platformList(
    ctx,
    'User',
    { fields: ['name', 'full_name', 'user_image', 'email', 'time_zone'], filters: [['name', 'in', names]], limit_page_length: names.length },
    maxPageLength,
  );
  const byName = new Map(rows.map((r) => [String(r.name), r]));
  for (const user of names) {
    const row = byName.get(user);
    info[user] = { fullname: row?.full_name || user, image: row?.user_image ?? null, name: user, email: row?.email ?? null, time_zone: row?.time_zone ?? null };
  }
  return info;
}

/** The last ten Versions of a tracked document, each cut to what the caller may read. */
async function versionsOf(ctx: DocContext, meta: Meta, name: string, maxPageLength: number): Promise<Row[]> {
  if (meta.definition.track_changes !== 1 || !ctx.meta.get(VERSION_DOCTYPE)) return [];
  const rows = await platformList(
    ctx,
    VERSION_DOCTYPE,
    { fields: ['name', 'owner', 'creation', 'data'], filters: { ref_doctype: meta.name, docname: name }, order_by: 'creation desc', limit_page_length: 10 },
    maxPageLength,
  );
  const shown: Row[] = [];
  for (const row of rows) {
    const data = readableVersionData(ctx.meta, meta, ctx.principal, cstr(row.data));
    if (data !== undefined) shown.push({ ...row, data });
  }
  return shown;
}

/** Frappe's `_user_tags` (`,a,b`) as get_tags answers them (`a,b`). */
const tagsOf = (doc: DocData): string =>
  cstr(doc._user_tags)
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .join(',');

/**
 * load.py get_docinfo: what the form's sidebar and timeline show besides the document. Quire keeps
 * no Communications, shares, view logs, milestones or follows: those lists are empty.
 */
async function docinfoOf(ctx: DocContext, meta: Meta, doc: DocData, maxPageLength: number): Promise<Row> {
  const name = String(doc.name);
  const reference = { reference_doctype: meta.name, reference_name: name };
  const comments = ctx.meta.get(COMMENT)
    ? await platformList(
        ctx,
        COMMENT,
        {
          fields: ['name', 'creation', 'content', 'owner', 'comment_type', 'published'],
          filters: reference,
          order_by: 'creation desc',
          limit_page_length: maxPageLength,
        },
        maxPageLength,
      )
    : [];
  const lists: Record<string, Row[]> = { comments: [], shared: [], assignment_logs: [], attachment_logs: [], info_logs: [], like_logs: [], workflow_logs: [] };
  for (const c of comments) {
    const list = COMMENT_LISTS[String(c.comment_type)];
    if (list) lists[list]?.push(c);
  }
  const attachments = await platformList(
    ctx,
    'File',
    {
      fields: ['name', 'file_name', 'file_url', 'file_type', 'file_size', 'is_private', 'attached_to_field', 'folder'],
      filters: { attached_to_doctype: meta.name, attached_to_name: name },
      limit_page_length: maxPageLength,
    },
    maxPageLength,
  );
  const assignments = await platformList(
    ctx,
    'ToDo',
    {
      fields: ['name', 'allocated_to as owner', 'description', 'status'],
      filters: [
        ['reference_type', '=', meta.name],
        ['reference_name', '=', name],
        ['status', 'not in', ['Cancelled', 'Closed']],
        ['allocated_to', 'is', 'set'],
      ],
      limit_page_length: maxPageLength,
    },
    maxPageLength,
  );
  const versions = await versionsOf(ctx, meta, name, maxPageLength);
  const users = [
    doc.owner,
    doc.modified_by,
    ...assignments.map((a) => a.owner),
    ...versions.map((v) => v.owner),
    ...Object.values(lists).flatMap((l) => l.map((c) => c.owner)),
  ];
  return {
    user_info: await userInfo(ctx, users, maxPageLength),
    ...lists,
    doctype: meta.name,
    name,
    attachments,
    communications: [],
    automated_messages: [],
    versions,
    assignments,
    permissions: docPermissions(meta, ctx.principal, doc),
    shared: [],
    views: [],
    additional_timeline_content: [],
    milestones: [],
    is_document_followed: false,
    tags: tagsOf(doc),
    document_email: null,
  };
}

// ------------------------------------------------------------------------------------ _link_titles

/** Linked names by the DocType they are in. */
type LinksByDoctype = Map<string, Set<string>>;

function addLink(links: LinksByDoctype, doctype: unknown, name: unknown): void {
  if (typeof doctype !== 'string' || doctype === '') return;
  if (typeof name !== 'string' && typeof name !== 'number') return;
  if (name === '') return;
  let names = links.get(doctype);
  if (!names) links.set(doctype, (names = new Set()));
  names.add(String(name));
}

/**
 * The Link and Dynamic Link values of one document or child row (Frappe's
 * get_title_values_for_link_and_dynamic_link_fields). Fields the caller may not read are skipped,
 * as Frappe's apply_fieldlevel_read_permissions has emptied them by then: a key would show the value.
 */
function collectLinks(links: LinksByDoctype, meta: Meta, row: DocData, hidden: ReadonlySet<string>): void {
  for (const field of meta.fields) {
    if (hidden.has(field.fieldname)) continue;
    if (field.fieldtype === 'Link') addLink(links, field.options, row[field.fieldname]);
    else if (field.fieldtype === 'Dynamic Link' && field.options && !hidden.has(field.options)) {
      addLink(links, row[field.options], row[field.fieldname]);
    }
  }
}

/** The links of the document and of its child rows (Table and Table MultiSelect), each row read at its own DocType's permlevels. */
function linksOf(tenant: TenantMeta, meta: Meta, doc: DocData, principal: Principal): LinksByDoctype {
  const links: LinksByDoctype = new Map();
  const hidden = permittedLevels(meta, principal).hidden;
  collectLinks(links, meta, doc, hidden);
  for (const table of meta.tableFields) {
    const child = table.options ? tenant.get(table.options) : undefined;
    const rows = doc[table.fieldname];
    if (!child || hidden.has(table.fieldname) || !Array.isArray(rows)) continue;
    const childHidden = permittedLevels(child, principal).hidden;
    for (const row of rows as DocData[]) collectLinks(links, child, row, childHidden);
  }
  return links;
}

/**
 * load.py set_link_titles: `"<DocType>::<name>"` → the title, for the document's links whose
 * DocType shows titles in links; one query per such DocType, and only documents the caller may
 * read (linkTitles, as get_link_title answers them).
 */
async function linkTitlesOf(ctx: DocContext, meta: Meta, doc: DocData): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [doctype, names] of linksOf(ctx.meta, meta, doc, ctx.principal)) {
    const target = ctx.meta.get(doctype);
    if (!target) continue;
    // Sequential: ctx.db may be one connection (a transaction), which runs one query at a time anyway.
    for (const [name, title] of await linkTitles(ctx, target, [...names])) out[`${doctype}::${name}`] = title;
  }
  return out;
}

/**
 * getdoc(doctype, name): the document for its form, in `docs` (as Frappe's response serialises a
 * document: without nulls, without the fields the caller may not read), and its `docinfo`. A
 * missing document answers `[]` once the caller may read the DocType (403 otherwise), as Frappe's.
 * `_link_titles` holds the titles its Links show (linkTitlesOf), `{}` when none.
 */
export const getdoc = whitelist(
  async (args, ctx) => {
    const { meta: tenant, principal } = ctx.doc;
    const meta = tenant.require(doctypeArg(args.doctype));
    const name = nameArg(args.name);
    if (!meta.isVirtual && !meta.issingle && !(await docExists(ctx.doc, meta.name, name))) {
      if (!readableThrough(tenant, meta, principal)) throw new PermissionError(`No permission for ${meta.name}`, { title: 'Not Permitted' });
      return [];
    }
    const doc = await getDoc(ctx.doc, meta.name, name);
    const hidden = permittedLevels(meta, principal).hidden;
    ctx.response.set('docs', [serializeDoc(tenant, meta, doc, { includeNulls: false, hidden })]);
    ctx.response.set('docinfo', await docinfoOf(ctx.doc, meta, doc, ctx.settings.maxPageLength));
    // Always, `{}` when there is nothing to show, as Frappe's load.py sends it.
    ctx.response.set('_link_titles', await linkTitlesOf(ctx.doc, meta, doc));
    return undefined;
  },
  { methods: ['GET', 'POST'], allowScopedTokens: true, summary: 'A document with its timeline (docinfo), for its form' },
);

/** get_docinfo(doctype, name): the document's `docinfo` (404 when missing, 403 when the caller may not read it). */
export const get_docinfo = whitelist(
  async (args, ctx) => {
    const meta = ctx.doc.meta.require(doctypeArg(args.doctype));
    const doc = await getDoc(ctx.doc, meta.name, nameArg(args.name));
    ctx.response.set('docinfo', await docinfoOf(ctx.doc, meta, doc, ctx.settings.maxPageLength));
    return undefined;
  },
  { methods: ['GET', 'POST'], allowScopedTokens: true, summary: 'The timeline of a document (comments, versions, assignments, attachments)' },
);
