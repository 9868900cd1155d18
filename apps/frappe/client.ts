import { whitelist, type MethodArgs } from '@quire/apps';
import { deleteDoc, getCount, getDoc, getList, insertDoc, renameDoc, serializeDoc, updateDoc, type DocContext, type DocData } from '@quire/documents';
import { DataError, doesNotExist, FrappeError, InvalidColumnName, PermissionError, TimestampMismatchError, ValidationError } from '@quire/errors';
import { cstr, decodeJsonArg, isPlainObject, jsonOrText, pyBool, sbool } from '@quire/frappe-compat';
import { fieldTypeSpec, type Meta } from '@quire/meta';
import { permittedLevels, readScope } from '@quire/permissions';

/**
 * frappe.client (frappe/client.py): the generic document methods clients call over /api/method.
 * Arguments arrive as strings (query string, form) or JSON values (JSON body); complex ones may
 * be JSON text in either. Documents come back as `doc.as_dict()`: nulls included.
 */

// ------------------------------------------------------------------------------------ arguments

function missing(name: string): never {
  throw new ValidationError(`${name} is required`, { title: 'Missing Argument' });
}

function doctypeArg(args: MethodArgs): string {
  const doctype = args.doctype;
  if (typeof doctype !== 'string' || doctype === '') missing('doctype');
  return doctype;
}

/** A document name: text, or a number (autoincrement names). */
function nameArg(args: MethodArgs, key: string): string | number {
  const value = args[key];
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value === '') missing(key);
  return value;
}

/** A document argument: an object or the JSON text of one. */
function docArg(name: string, value: unknown): DocData {
  if (value === undefined || value === null || value === '') missing(name);
  const decoded = decodeJsonArg(name, value);
  if (!isPlainObject(decoded)) throw new ValidationError(`${name} must be a JSON object`, { title: 'Invalid Request' });
  return { ...decoded };
}

/** A list argument: an array or the JSON text of one. */
function listArg(name: string, value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') missing(name);
  const decoded = decodeJsonArg(name, value);
  if (!Array.isArray(decoded)) throw new ValidationError(`${name} must be a JSON list`, { title: 'Invalid Request' });
  return decoded;
}

/** The `doctype` key of a document argument. */
function doctypeOf(doc: DocData, name: string): string {
  const doctype = doc.doctype;
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError(`${name} must have a doctype`, { title: 'Missing Argument' });
  return doctype;
}

// ------------------------------------------------------------------------------------ results

/** `doc.as_dict()`: every field, nulls included, minus the fields the caller may not read. */
function asDict(ctx: DocContext, meta: Meta, doc: DocData): DocData {
  return serializeDoc(ctx.meta, meta, doc, { includeNulls: true, hidden: permittedLevels(meta, ctx.principal).hidden });
}

/** Runs `fn` in one transaction, with a context whose every operation is part of it. */
function inTransaction<T>(ctx: DocContext, fn: (inner: DocContext) => Promise<T>): Promise<T> {
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx }));
}

/** frappe.has_permission(doctype) for reads: 403 "No permission for <doctype>" (child tables: the parent's). */
function requireRead(ctx: DocContext, meta: Meta, parent: unknown): void {
  let target = meta;
  if (meta.istable) {
    const parentMeta = typeof parent === 'string' ? ctx.meta.get(parent) : undefined;
    if (!parentMeta || !parentMeta.tableFields.some((f) => f.options === meta.name)) {
      throw new PermissionError(`Please specify a valid parent DocType for ${meta.name}`, { title: 'Insufficient Permission' });
    }
    target = parentMeta;
  }
  if (readScope(target, ctx.principal) === false) {
    throw new PermissionError(`No permission for ${meta.name}`, { title: 'Not Permitted', extra: { _error_message: `No permission for ${meta.name}` } });
  }
}

// ------------------------------------------------------------------------------------ filters, fields

/**
 * Frappe's get_safe_filters, then `{"name": filters}` for a name: JSON text is decoded (the
 * Python client's `null` means none), a bare name or a number names one document, and empty
 * filters mean none (undefined).
 */
function safeFilters(value: unknown): unknown {
  let filters = jsonOrText(value);
  if (typeof filters === 'number') filters = String(filters);
  if (typeof filters === 'string') filters = { name: filters };
  return pyBool(filters) ? filters : undefined;
}

/** get_value's `fieldname`: a field, a JSON list of fields, or nothing (`[]`, missing) for `name`. */
function fieldList(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  let fields = jsonOrText(value);
  if (typeof fields === 'string') fields = [fields];
  if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string')) {
    throw new DataError(`fieldname must be a field or a list of fields`, { title: 'Invalid Field' });
  }
  return fields as string[];
}

const COLUMN_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Equality filters on a Single: `{field: value}`, `{field: ["=", value]}` or `[[field, "=", value]]`. */
function singleConditions(meta: Meta, filters: unknown): Array<[string, unknown]> {
  if (filters === undefined) return [];
  const unsupported = (): never => {
    throw new ValidationError(`Only "=" filters apply to the Single DocType ${meta.name}`, { title: 'Invalid Filter' });
  };
  const equality = (field: unknown, operator: unknown, value: unknown): [string, unknown] => {
    if (typeof field !== 'string' || operator !== '=') unsupported();
    return [field as string, value];
  };
  if (isPlainObject(filters)) {
    return Object.entries(filters).map(([field, v]) => (Array.isArray(v) ? equality(field, v[0], v[1]) : equality(field, '=', v)));
  }
  if (Array.isArray(filters)) {
    const tuples = typeof filters[0] === 'string' ? [filters] : filters;
    return tuples.map((t) => {
      if (!Array.isArray(t)) return unsupported();
      if (t.length === 2) return equality(t[0], '=', t[1]);
      if (t.length === 3) return equality(t[0], t[1], t[2]);
      if (t.length === 4) return equality(t[1], t[2], t[3]);
      return unsupported();
    });
  }
  return unsupported();
}

/** A Single's values for get_value: the requested columns of the stored record, if it matches the filters. */
async function singleRow(ctx: DocContext, meta: Meta, fields: string[], filters: unknown): Promise<Record<string, unknown> | undefined> {
  const doc = await getDoc(ctx, meta.name, meta.name);
  for (const [field, value] of singleConditions(meta, filters)) {
    if (!meta.hasColumn(field) && field !== 'name') throw new DataError(`Field not permitted in query: ${field}`);
    const stored = doc[field];
    if (cstr(stored) !== cstr(value)) return undefined;
  }
  const hidden = permittedLevels(meta, ctx.principal).hidden;
  const wanted = fields.length === 0 ? ['name'] : fields;
  const row: Record<string, unknown> = {};
  for (const field of wanted) {
    if (field.trim() === '*') {
      for (const c of meta.columns) if (!hidden.has(c.name)) row[c.name] = doc[c.name] ?? null;
      continue;
    }
    if (!COLUMN_NAME_RE.test(field)) throw new DataError('Use of sub-query or function is restricted');
    if (!meta.hasColumn(field)) throw new DataError(`Field not permitted in query: ${field}`);
    if (hidden.has(field)) continue;
    row[field] = doc[field] ?? null;
  }
  return row;
}

// ------------------------------------------------------------------------------------ reads

/**
 * Every frappe.client method checks DocType permissions through @quire/documents and
 * @quire/permissions, which apply an OAuth token's scopes: callable with a scoped token.
 */
const READ = { allowScopedTokens: true } as const;

/** get_count(doctype, filters=None): rows the caller may read that match the filters. */
export const get_count = whitelist(
  (args, ctx) => getCount(ctx.doc, doctypeArg(args), { filters: args.filters, or_filters: args.or_filters, parent: args.parent }),
  READ,
);

/** get_list(doctype, fields, filters, group_by, order_by, limit_start, limit_page_length=20, parent, as_dict, or_filters). */
export const get_list = whitelist(
  (args, ctx) =>
    getList(
      ctx.doc,
      doctypeArg(args),
      {
        fields: args.fields,
        filters: args.filters,
        or_filters: args.or_filters,
        order_by: args.order_by,
        group_by: args.group_by,
        limit_start: args.limit_start,
        limit_page_length: args.limit_page_length ?? args.limit ?? 20,
        as_dict: args.as_dict,
        parent: args.parent,
      },
      ctx.settings.maxPageLength,
    ),
  READ,
);

/**
 * get(doctype, name=None, filters=None, parent=None): a whole document (nulls included), by name,
 * else the first match of the filters, else the Single.
 */
export const get = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const meta = ctx.doc.meta.require(doctype);
  if (meta.istable) requireRead(ctx.doc, meta, args.parent);
  let name: unknown = args.name;
  if (!pyBool(name)) {
    // Frappe: `elif filters or filters == {}` (an empty object still means "the first document")
    if ((pyBool(args.filters) || isPlainObject(args.filters)) && !meta.issingle) {
      const filters = safeFilters(args.filters);
      const rows = (await getList(
        ctx.doc,
        doctype,
        { fields: ['name'], filters, limit_page_length: 1, parent: args.parent },
        ctx.settings.maxPageLength,
      )) as Array<{ name: unknown }>;
      if (rows.length === 0) throw doesNotExist(meta.name, typeof args.filters === 'string' ? args.filters : JSON.stringify(args.filters));
      name = rows[0]?.name;
    } else {
      name = meta.name; // the Single (a non-single DocType has no document named after itself: 404)
    }
  }
  return asDict(ctx.doc, meta, await getDoc(ctx.doc, doctype, name));
}, READ);

/**
 * get_value(doctype, fieldname, filters=None, as_dict=True, debug=False, parent=None): fields of the
 * first document matching the filters, read through the list compiler (so only field names pass).
 */
export const get_value = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const meta = ctx.doc.meta.require(doctype);
  requireRead(ctx.doc, meta, args.parent);
  const filters = safeFilters(args.filters);
  const fields = fieldList(args.fieldname);
  const dict = args.as_dict === undefined ? true : pyBool(args.as_dict);
  let row: unknown;
  if (meta.issingle) {
    const values = await singleRow(ctx.doc, meta, fields, filters);
    row = values === undefined || dict ? values : Object.values(values);
  } else {
    const rows = await getList(ctx.doc, doctype, { fields, filters, limit_page_length: 1, as_dict: dict, parent: args.parent }, ctx.settings.maxPageLength);
    row = rows[0];
  }
  if (dict) return row ?? {};
  if (row === undefined) return undefined;
  return fields.length > 1 ? row : (row as unknown[])[0];
}, READ);

/** get_single_value(doctype, field): one field of a Single, typed as its fieldtype. */
export const get_single_value = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const meta = ctx.doc.meta.require(doctype);
  requireRead(ctx.doc, meta, undefined);
  if (!meta.issingle) throw new ValidationError(`${meta.name} is not a Single DocType`, { title: 'Not a Single' });
  const field = args.field;
  if (typeof field !== 'string' || field === '') missing('field');
  if (!meta.dataFields.some((f) => f.fieldname === field)) {
    throw new InvalidColumnName(`Invalid field name: <strong>${field}</strong>`, { title: 'Invalid Field' });
  }
  if (permittedLevels(meta, ctx.doc.principal).hidden.has(field)) {
    throw new PermissionError(`No permission to read ${field} of ${meta.name}`, { title: 'Not Permitted' });
  }
  const doc = await getDoc(ctx.doc, doctype, doctype);
  const value = doc[field] ?? null;
  // Frappe casts the stored text by fieldtype: an unset text field reads as "" (cstr(None)).
  return value === null && fieldTypeSpec(meta.field(field)?.fieldtype ?? 'Data').kind === 'text' ? '' : value;
}, READ);

// ------------------------------------------------------------------------------------ writes

const WRITE = { methods: ['POST', 'PUT'], allowScopedTokens: true } as const;

/** frappe.model.default_fields + child_table_fields. */
const STANDARD_FIELDS = new Set(['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx', 'doctype', 'parent', 'parentfield', 'parenttype']);

function cannotEditStandard(): never {
  throw new ValidationError('Cannot edit standard fields', { title: 'Not Allowed' });
}

/**
 * set_value's values: `{fieldname: value}`; with no value (Python-falsy), `fieldname` itself is
 * the values (an object or its JSON text), and a plain field name gets "".
 */
function setValueValues(fieldname: unknown, value: unknown): DocData {
  if (typeof fieldname === 'string' && STANDARD_FIELDS.has(fieldname)) cannotEditStandard();
  let values: unknown;
  if (!pyBool(value)) {
    values = jsonOrText(fieldname);
    // A plain field name (not JSON) is set to "".
    if (typeof fieldname === 'string' && values === fieldname) values = { [fieldname]: '' };
  } else {
    if (typeof fieldname !== 'string' || fieldname === '') missing('fieldname');
    values = { [fieldname]: value };
  }
  if (!isPlainObject(values)) throw new ValidationError('fieldname must be a field or a JSON object of values', { title: 'Invalid Request' });
  // Frappe checks only a plain fieldname; keys of a dict are checked too, so set_value never submits or renames.
  for (const key of Object.keys(values)) if (STANDARD_FIELDS.has(key)) cannotEditStandard();
  return values;
}

/**
 * set_value(doctype, name, fieldname, value=None): merges the values and saves; a child row is
 * changed through its parent, and the parent comes back.
 */
export const set_value = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const name = nameArg(args, 'name');
  const meta = ctx.doc.meta.require(doctype);
  if (args.fieldname === undefined || args.fieldname === null) missing('fieldname');
  const values = setValueValues(args.fieldname, args.value);
  return inTransaction(ctx.doc, async (inner) => {
    if (!meta.istable) return asDict(inner, meta, await updateDoc(inner, doctype, name, values));
    const row = await getDoc(inner, doctype, name);
    const parentMeta = inner.meta.require(String(row.parenttype));
    const parent = await getDoc(inner, parentMeta.name, row.parent);
    const field = String(row.parentfield);
    const rows = ((parent[field] as DocData[] | undefined) ?? []).map((r) => (String(r.name) === String(row.name) ? { ...r, ...values, name: r.name } : r));
    return asDict(inner, parentMeta, await updateDoc(inner, parentMeta.name, row.parent, { [field]: rows }));
  });
}, WRITE);

/** Frappe's insert_doc: a child row (with parenttype, parent, parentfield) is appended through its parent, which is returned. */
async function insertOne(ctx: DocContext, input: DocData, argName: string): Promise<{ meta: Meta; doc: DocData }> {
  const doctype = doctypeOf(input, argName);
  const meta = ctx.meta.require(doctype);
  const { doctype: _dt, ...values } = input;
  const doc = await insertDoc(ctx, doctype, values);
  return { meta: meta.istable ? ctx.meta.require(String(input.parenttype)) : meta, doc };
}

/** insert(doc): a new document (dict or JSON text with `doctype`); a child row returns its parent. */
export const insert = whitelist(async (args, ctx) => {
  const { meta, doc } = await insertOne(ctx.doc, docArg('doc', args.doc), 'doc');
  return asDict(ctx.doc, meta, doc);
}, WRITE);

const MAX_INSERTS = 200;

/** insert_many(docs): up to 200 documents in one transaction; their names (a child row's parent name). */
export const insert_many = whitelist(async (args, ctx) => {
  const docs = listArg('docs', args.docs);
  if (docs.length > MAX_INSERTS) throw new ValidationError(`Only ${MAX_INSERTS} inserts allowed in one request`, { title: 'Too Many Documents' });
  return inTransaction(ctx.doc, async (inner) => {
    const names: unknown[] = [];
    for (const [i, item] of docs.entries()) {
      if (!isPlainObject(item)) throw new ValidationError(`docs[${i}] must be a JSON object`, { title: 'Invalid Request' });
      const { doc } = await insertOne(inner, { ...item }, `docs[${i}]`);
      names.push(doc.name);
    }
    return names;
  });
}, WRITE);

/**
 * The stored document replaced by a full client document (frappe.get_doc(doc).save()): fields and
 * tables absent from it are emptied, a missing docstatus is 0, and `modified` must be the stored one.
 */
async function saveFull(ctx: DocContext, input: DocData, docstatus: number | undefined): Promise<DocData> {
  const doctype = doctypeOf(input, 'doc');
  const meta = ctx.meta.require(doctype);
  const { doctype: _dt, __islocal: local, ...values } = input;
  if (docstatus !== undefined) values.docstatus = docstatus;
  // Document.save on a document without a name (or marked local) inserts it.
  if (pyBool(local) || !pyBool(values.name)) {
    const { meta: savedMeta, doc } = await insertOne(ctx, { ...values, doctype }, 'doc');
    return asDict(ctx, savedMeta, doc);
  }
  return inTransaction(ctx, async (inner) => {
    const name = meta.issingle ? meta.name : values.name;
    const current = await getDoc(inner, doctype, name);
    const sent = values.modified;
    // Frappe's check_if_latest: cstr(db modified) != cstr(sent), so a missing `modified` is stale
    // (a Single never saved has none either, and then matches).
    if ((sent !== undefined && sent !== null && typeof sent !== 'string') || cstr(sent) !== cstr(current.modified)) {
      throw new TimestampMismatchError(
        `Error: ${String(current.name)} (${meta.name}) has been modified after you have opened it (${cstr(current.modified)}, ${sent === undefined || sent === null ? 'None' : cstr(sent)}). Please refresh to get the latest document.`,
        { title: 'Document Modified' },
      );
    }
    const patch: DocData = { modified: sent, docstatus: values.docstatus ?? 0 };
    for (const f of meta.dataFields) patch[f.fieldname] = f.fieldname in values ? values[f.fieldname] : null;
    for (const f of meta.tableFields) patch[f.fieldname] = f.fieldname in values ? values[f.fieldname] : [];
    if (meta.istable) delete patch.docstatus; // a row follows its parent's docstatus
    return asDict(inner, meta, await updateDoc(inner, doctype, name, patch));
  });
}

/** save(doc): the full document (with `name` and `modified`) replaces the stored one. */
export const save = whitelist((args, ctx) => saveFull(ctx.doc, docArg('doc', args.doc), undefined), WRITE);

/** submit(doc): saves the full document with docstatus 1 (the Python client sends it as `doclist`). */
export const submit = whitelist((args, ctx) => {
  const given = args.doc ?? args.doclist;
  return saveFull(ctx.doc, docArg(args.doc === undefined && args.doclist !== undefined ? 'doclist' : 'doc', given), 1);
}, WRITE);

/** cancel(doctype, name): a submitted document becomes cancelled; it comes back (as Frappe's `wrapper.as_dict()`). */
export const cancel = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const name = nameArg(args, 'name');
  const meta = ctx.doc.meta.require(doctype);
  return asDict(ctx.doc, meta, await updateDoc(ctx.doc, doctype, name, { docstatus: 2 }));
}, WRITE);

/** delete(doctype, name): deletes the document (a child row through its parent); answers `{}`. */
const deleteMethod = whitelist(
  async (args, ctx) => {
    await deleteDoc(ctx.doc, doctypeArg(args), nameArg(args, 'name'));
    return undefined;
  },
  { methods: ['DELETE', 'POST'], allowScopedTokens: true },
);
export { deleteMethod as delete };

/** rename_doc(doctype, old_name, new_name, merge=False): the document's new name. */
export const rename_doc = whitelist(async (args, ctx) => {
  const doctype = doctypeArg(args);
  const oldName = nameArg(args, 'old_name');
  if (args.new_name === undefined || args.new_name === null || args.new_name === '') missing('new_name');
  return renameDoc(ctx.doc, doctype, oldName, args.new_name, { merge: sbool(args.merge) });
}, WRITE);

/** The line a Python traceback ends with, which is what Frappe's `exc` shows last. */
function excLine(e: FrappeError): string {
  return e.message ? `frappe.exceptions.${e.excType}: ${e.message}` : `frappe.exceptions.${e.excType}`;
}

/**
 * bulk_update(docs): each `{doctype, docname, ...values}` merged and saved in its own savepoint;
 * failures are collected, not raised: `{"failed_docs": [{"doc": …, "exc": …}]}`.
 */
export const bulk_update = whitelist(async (args, ctx) => {
  const docs = listArg('docs', args.docs);
  for (const [i, item] of docs.entries()) {
    if (!isPlainObject(item)) throw new ValidationError(`docs[${i}] must be a JSON object`, { title: 'Invalid Request' });
  }
  return inTransaction(ctx.doc, async (inner) => {
    const failed: Array<{ doc: unknown; exc: string }> = [];
    for (const item of docs as Array<Record<string, unknown>>) {
      const { flags: _flags, ...doc } = item;
      try {
        const { doctype, docname, ...values } = doc;
        if (typeof doctype !== 'string' || doctype === '') missing('doctype');
        if ((typeof docname !== 'string' || docname === '') && typeof docname !== 'number') missing('docname');
        // updateDoc inside a transaction is a savepoint: a failure leaves the others untouched.
        await updateDoc(inner, doctype, docname, values);
      } catch (e) {
        if (!(e instanceof FrappeError)) throw e;
        failed.push({ doc, exc: excLine(e) });
      }
    }
    return { failed_docs: failed };
  });
}, WRITE);
