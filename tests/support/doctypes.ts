import type { CallResult, TestServer, TestTenant } from './server';

/**
 * The DocTypes the end-to-end suites create at runtime (through POST /api/resource/DocType), and the
 * ways they create them. A definition used by one test only stays in that test; what a suite posts
 * for every test (or several suites post) is here.
 */

export type FieldDef = {
  fieldname: string;
  fieldtype?: string;
  label?: string;
  options?: string;
  default?: string;
  reqd?: 0 | 1;
  unique?: 0 | 1;
  length?: number;
  precision?: number;
  permlevel?: number;
  allow_on_submit?: 0 | 1;
  set_only_once?: 0 | 1;
  non_negative?: 0 | 1;
};

export type DoctypeDef = {
  name: string;
  module?: string;
  autoname?: string;
  istable?: 0 | 1;
  issingle?: 0 | 1;
  is_submittable?: 0 | 1;
  is_tree?: 0 | 1;
  nsm_parent_field?: string;
  allow_rename?: 0 | 1;
  title_field?: string;
  search_fields?: string;
  fields: FieldDef[];
  permissions?: Array<Record<string, unknown>>;
};

/** A DocPerm row giving System Manager every right. */
export const ALL_RIGHTS = {
  role: 'System Manager',
  read: 1,
  write: 1,
  create: 1,
  delete: 1,
  submit: 1,
  cancel: 1,
  amend: 1,
};

/** The rights of a DocPerm row that may do everything to a draft (spread it into a row with a role). */
export const FULL = { read: 1, write: 1, create: 1, delete: 1 };

/** POST /api/resource/DocType with exactly this body (well formed or not); the caller checks the answer. */
export function postDoctype(t: TestTenant, definition: object): Promise<CallResult> {
  return t.call('POST', '/api/resource/DocType', { json: definition });
}

/**
 * Creates a DocType in module Custom (System Manager may do everything unless `permissions` is
 * given); throws with the response when refused.
 */
export async function createDoctype(t: TestTenant, def: DoctypeDef): Promise<Record<string, any>> {
  const res = await postDoctype(t, { module: 'Custom', permissions: [ALL_RIGHTS], ...def });
  if (res.status !== 200) throw new Error(`creating DocType ${def.name} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** A fresh tenant of `server` with these DocTypes created in order (through createDoctype). */
export async function tenantWithDoctypes(server: TestServer, ...defs: DoctypeDef[]): Promise<TestTenant> {
  const t = await server.tenant();
  for (const def of defs) await createDoctype(t, def);
  return t;
}

// ------------------------------------------------------------------------------------ record API (tests/record-api)

/** `Note` (hash naming): title (Data), body (Small Text), pages (Int), pinned (Check). */
export const NOTE: DoctypeDef = {
  name: 'Note',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data' },
    { fieldname: 'body', label: 'Body', fieldtype: 'Small Text' },
    { fieldname: 'pages', label: 'Pages', fieldtype: 'Int' },
    { fieldname: 'pinned', label: 'Pinned', fieldtype: 'Check' },
  ],
};

/** `Book` (hash naming): title (reqd), notes, pages, published. */
export const BOOK: DoctypeDef = {
  name: 'Book',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'notes', label: 'Notes', fieldtype: 'Small Text' },
    { fieldname: 'pages', label: 'Pages', fieldtype: 'Int' },
    { fieldname: 'published', label: 'Published', fieldtype: 'Date' },
  ],
};

/** `Ledger Entry` (prompt naming, a space in the DocType name): memo. */
export const LEDGER_ENTRY: DoctypeDef = {
  name: 'Ledger Entry',
  autoname: 'prompt',
  fields: [{ fieldname: 'memo', label: 'Memo', fieldtype: 'Data' }],
};

/** `Order Line` (child: item reqd, qty Int, assignee Link User). */
export const ORDER_LINE: DoctypeDef = {
  name: 'Order Line',
  istable: 1,
  fields: [
    { fieldname: 'item', label: 'Item', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'qty', label: 'Qty', fieldtype: 'Int' },
    { fieldname: 'assignee', label: 'Assignee', fieldtype: 'Link', options: 'User' },
  ],
  permissions: [],
};

/** `Sales Order` (hash): customer, lines (Table of Order Line). */
export const SALES_ORDER: DoctypeDef = {
  name: 'Sales Order',
  autoname: 'hash',
  fields: [
    { fieldname: 'customer', label: 'Customer', fieldtype: 'Data' },
    { fieldname: 'lines', label: 'Lines', fieldtype: 'Table', options: 'Order Line' },
  ],
};

/** `Claim Item` (child): item, note (allow_on_submit). */
export const CLAIM_ITEM: DoctypeDef = {
  name: 'Claim Item',
  istable: 1,
  fields: [
    { fieldname: 'item', label: 'Item', fieldtype: 'Data' },
    { fieldname: 'note', label: 'Note', fieldtype: 'Data', allow_on_submit: 1 },
  ],
};

/** `Claim` (submittable, hash): title, amount, remark (allow_on_submit), items (Table of Claim Item). */
export const CLAIM: DoctypeDef = {
  name: 'Claim',
  autoname: 'hash',
  is_submittable: 1,
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data' },
    { fieldname: 'amount', label: 'Amount', fieldtype: 'Currency' },
    { fieldname: 'remark', label: 'Remark', fieldtype: 'Small Text', allow_on_submit: 1 },
    { fieldname: 'items', label: 'Items', fieldtype: 'Table', options: 'Claim Item' },
  ],
};

/** `Widget` (hash): the fieldtypes the hostile inputs aim at. */
export const WIDGET: DoctypeDef = {
  name: 'Widget',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'notes', label: 'Notes', fieldtype: 'Long Text' },
    { fieldname: 'qty', label: 'Qty', fieldtype: 'Int' },
    { fieldname: 'price', label: 'Price', fieldtype: 'Currency' },
    { fieldname: 'ratio', label: 'Ratio', fieldtype: 'Float' },
    { fieldname: 'active', label: 'Active', fieldtype: 'Check' },
    { fieldname: 'due', label: 'Due', fieldtype: 'Date' },
    { fieldname: 'at', label: 'At', fieldtype: 'Datetime' },
    { fieldname: 'colour', label: 'Colour', fieldtype: 'Select', options: 'Red\nBlue' },
    { fieldname: 'keeper', label: 'Keeper', fieldtype: 'Link', options: 'User' },
  ],
};

/** `Tag` (prompt naming): label. */
export const TAG: DoctypeDef = { name: 'Tag', autoname: 'prompt', fields: [{ fieldname: 'label', label: 'Label', fieldtype: 'Data' }] };

/** `Memo` (hash): subject, body. */
export const MEMO: DoctypeDef = {
  name: 'Memo',
  autoname: 'hash',
  fields: [
    { fieldname: 'subject', label: 'Subject', fieldtype: 'Data' },
    { fieldname: 'body', label: 'Body', fieldtype: 'Small Text' },
  ],
};

/** `Sample` (hash): one field of each value-bearing fieldtype the serialisation tests cover. */
export const SAMPLE: DoctypeDef = {
  name: 'Sample',
  autoname: 'hash',
  fields: [
    { fieldname: 'label', fieldtype: 'Data' },
    { fieldname: 'at', label: 'At', fieldtype: 'Datetime' },
    { fieldname: 'on', label: 'On', fieldtype: 'Date' },
    { fieldname: 'clock', label: 'Clock', fieldtype: 'Time' },
    { fieldname: 'price', label: 'Price', fieldtype: 'Currency' },
    { fieldname: 'ratio', label: 'Ratio', fieldtype: 'Float' },
    { fieldname: 'share', label: 'Share', fieldtype: 'Percent' },
    { fieldname: 'count', label: 'Count', fieldtype: 'Int' },
    { fieldname: 'flag', label: 'Flag', fieldtype: 'Check' },
    { fieldname: 'payload', label: 'Payload', fieldtype: 'JSON' },
  ],
};

/** `Shop Settings` (issingle) with defaults on several fieldtypes. */
export const SHOP_SETTINGS: DoctypeDef = {
  name: 'Shop Settings',
  issingle: 1,
  fields: [
    { fieldname: 'shop_name', label: 'Shop Name', fieldtype: 'Data', default: 'My Shop' },
    { fieldname: 'max_items', label: 'Max Items', fieldtype: 'Int', default: '10' },
    { fieldname: 'enabled', label: 'Enabled', fieldtype: 'Check', default: '1' },
    { fieldname: 'currency', label: 'Currency', fieldtype: 'Select', options: 'EUR\nUSD' },
    { fieldname: 'motto', label: 'Motto', fieldtype: 'Small Text' },
  ],
};

/** `Gadget` (hash) with one field per validation rule the validation tests cover. */
export const GADGET: DoctypeDef = {
  name: 'Gadget',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'maker', label: 'Maker', fieldtype: 'Data' },
    { fieldname: 'qty', label: 'Qty', fieldtype: 'Int' },
    { fieldname: 'weight', label: 'Weight', fieldtype: 'Float' },
    { fieldname: 'price', label: 'Price', fieldtype: 'Currency' },
    { fieldname: 'active', label: 'Active', fieldtype: 'Check' },
    { fieldname: 'made_on', label: 'Made On', fieldtype: 'Date' },
    { fieldname: 'seen_at', label: 'Seen At', fieldtype: 'Datetime' },
    { fieldname: 'colour', label: 'Colour', fieldtype: 'Select', options: 'Red\nGreen\nBlue' },
    { fieldname: 'keeper', label: 'Keeper', fieldtype: 'Link', options: 'User' },
    { fieldname: 'code', label: 'Code', fieldtype: 'Data', unique: 1 },
    { fieldname: 'short', label: 'Short', fieldtype: 'Data', length: 5 },
    { fieldname: 'stock', label: 'Stock', fieldtype: 'Int', non_negative: 1 },
    { fieldname: 'email', label: 'Email', fieldtype: 'Data', options: 'Email' },
    { fieldname: 'phone', label: 'Phone', fieldtype: 'Data', options: 'Phone' },
    { fieldname: 'site', label: 'Site', fieldtype: 'Data', options: 'URL' },
    { fieldname: 'serial', label: 'Serial', fieldtype: 'Data', set_only_once: 1 },
  ],
};

// ------------------------------------------------------------------------------------ the library (tests/methods)

/**
 * The frappe.client / frappe.desk.search method tests' small library domain, in creation order:
 *
 *   Genre          field:genre_name                         (renamed by field; linked from everywhere)
 *   Book Tag       child: tag, genre (Link Genre)
 *   Book           hash; title_field title; search_fields "author, genre"; tags (Table Book Tag)
 *   Loan           submittable, hash: book (Link Book), borrower
 *   Library Note   hash: ref_type (Link DocType) + ref_name (Dynamic Link)
 *   Library Settings  Single: library_name, max_loans (Int, default 5), open (Check), default_genre (Link Genre)
 */
export const LIBRARY: readonly DoctypeDef[] = [
  {
    name: 'Genre',
    autoname: 'field:genre_name',
    fields: [
      { fieldname: 'genre_name', label: 'Genre Name', fieldtype: 'Data', reqd: 1 },
      { fieldname: 'description', label: 'Description', fieldtype: 'Small Text' },
    ],
  },
  {
    name: 'Book Tag',
    istable: 1,
    fields: [
      { fieldname: 'tag', label: 'Tag', fieldtype: 'Data' },
      { fieldname: 'genre', label: 'Genre', fieldtype: 'Link', options: 'Genre' },
    ],
    permissions: [],
  },
  {
    name: 'Book',
    autoname: 'hash',
    title_field: 'title',
    search_fields: 'author, genre',
    fields: [
      { fieldname: 'title', label: 'Title', fieldtype: 'Data', reqd: 1 },
      { fieldname: 'author', label: 'Author', fieldtype: 'Data' },
      { fieldname: 'pages', label: 'Pages', fieldtype: 'Int' },
      { fieldname: 'price', label: 'Price', fieldtype: 'Currency' },
      { fieldname: 'genre', label: 'Genre', fieldtype: 'Link', options: 'Genre' },
      { fieldname: 'published', label: 'Published', fieldtype: 'Date' },
      { fieldname: 'in_print', label: 'In Print', fieldtype: 'Check' },
      { fieldname: 'format', label: 'Format', fieldtype: 'Select', options: 'Paperback\nHardcover' },
      { fieldname: 'tags', label: 'Tags', fieldtype: 'Table', options: 'Book Tag' },
    ],
  },
  {
    name: 'Loan',
    autoname: 'hash',
    is_submittable: 1,
    fields: [
      { fieldname: 'book', label: 'Book', fieldtype: 'Link', options: 'Book' },
      { fieldname: 'borrower', label: 'Borrower', fieldtype: 'Data' },
      { fieldname: 'remark', label: 'Remark', fieldtype: 'Data', allow_on_submit: 1 },
    ],
  },
  {
    name: 'Library Note',
    autoname: 'hash',
    fields: [
      { fieldname: 'ref_type', label: 'Reference Type', fieldtype: 'Link', options: 'DocType' },
      { fieldname: 'ref_name', label: 'Reference Name', fieldtype: 'Dynamic Link', options: 'ref_type' },
      { fieldname: 'content', label: 'Content', fieldtype: 'Data' },
    ],
  },
  {
    name: 'Library Settings',
    issingle: 1,
    fields: [
      { fieldname: 'library_name', label: 'Library Name', fieldtype: 'Data', default: 'City Library' },
      { fieldname: 'max_loans', label: 'Max Loans', fieldtype: 'Int', default: '5' },
      { fieldname: 'open', label: 'Open', fieldtype: 'Check' },
      { fieldname: 'default_genre', label: 'Default Genre', fieldtype: 'Link', options: 'Genre' },
    ],
  },
];

// ------------------------------------------------------------------------------------ list queries (tests/list)

/** `Gadget Group`: a tree (prompt naming) the list operators' `descendants of` / `ancestors of` walk. */
export const GADGET_GROUP: DoctypeDef = {
  name: 'Gadget Group',
  autoname: 'prompt',
  is_tree: 1,
  nsm_parent_field: 'parent_gadget_group',
  fields: [{ fieldname: 'label', fieldtype: 'Data' }],
};

/** `Gadget` as the list operator tests query it (field:code; one field of each filtered fieldtype; group in Gadget Group). */
export const LISTED_GADGET: DoctypeDef = {
  name: 'Gadget',
  autoname: 'field:code',
  fields: [
    { fieldname: 'code', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'label', fieldtype: 'Data' },
    { fieldname: 'qty', fieldtype: 'Int' },
    { fieldname: 'price', fieldtype: 'Currency' },
    { fieldname: 'active', fieldtype: 'Check' },
    { fieldname: 'due', fieldtype: 'Date' },
    { fieldname: 'seen_at', fieldtype: 'Datetime' },
    { fieldname: 'colour', fieldtype: 'Select', options: '\nRed\nGreen\nBlue' },
    { fieldname: 'group', fieldtype: 'Link', options: 'Gadget Group' },
  ],
};

// ------------------------------------------------------------------------------------ client libraries (tests/clients)

/** `Library Book` (hash), which frappe-js-sdk's db methods read and write. */
export const LIBRARY_BOOK: DoctypeDef = {
  name: 'Library Book',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'author', fieldtype: 'Data' },
    { fieldname: 'pages', fieldtype: 'Int' },
    { fieldname: 'price', fieldtype: 'Currency' },
    { fieldname: 'genre', fieldtype: 'Select', options: 'Fiction\nScience\nHistory' },
    { fieldname: 'published', fieldtype: 'Date' },
  ],
};

/** `SDK Task` (hash, submittable, renamable, an Attach field), for every frappe-js-sdk method. */
export const SDK_TASK: DoctypeDef = {
  name: 'SDK Task',
  autoname: 'hash',
  is_submittable: 1,
  allow_rename: 1,
  fields: [
    { fieldname: 'subject', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'points', fieldtype: 'Int' },
    { fieldname: 'done', fieldtype: 'Check' },
    { fieldname: 'attachment', fieldtype: 'Attach' },
  ],
  permissions: [ALL_RIGHTS],
};

/** `SDK Settings` (issingle): theme, default `light`. */
export const SDK_SETTINGS: DoctypeDef = { name: 'SDK Settings', issingle: 1, fields: [{ fieldname: 'theme', fieldtype: 'Data', default: 'light' }] };

/** `Py Note` (hash, submittable, renamable), for the Python frappe-client. */
export const PY_NOTE: DoctypeDef = {
  name: 'Py Note',
  autoname: 'hash',
  is_submittable: 1,
  allow_rename: 1,
  fields: [
    { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'public', fieldtype: 'Check' },
    { fieldname: 'count', fieldtype: 'Int' },
  ],
  permissions: [ALL_RIGHTS],
};

// ------------------------------------------------------------------------------------ files (tests/files)

/** `Dossier` (hash) with Attach and Attach Image fields: System Manager full, Author on own, Reader reads. */
export const DOSSIER: DoctypeDef = {
  name: 'Dossier',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'scan', fieldtype: 'Attach' },
    { fieldname: 'photo', fieldtype: 'Attach Image' },
  ],
  permissions: [
    { role: 'System Manager', ...FULL },
    { role: 'Author', ...FULL, if_owner: 1 },
    { role: 'Reader', read: 1 },
  ],
};

/** `Profile Card` (hash) with an Attach Image field: System Manager full, Writer on own. */
export const PROFILE_CARD: DoctypeDef = {
  name: 'Profile Card',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'avatar', fieldtype: 'Attach Image' },
  ],
  permissions: [
    { role: 'System Manager', ...FULL },
    { role: 'Writer', ...FULL, if_owner: 1 },
  ],
};
