import { qualified, type Queryable } from '@quire/db';
import { InvalidUUIDValue, NameError, ValidationError } from '@quire/errors';
import { cstr, pyLen } from '@quire/frappe-compat';
import { fieldLabel, nowDatetime, selectOptions, type Meta } from '@quire/meta';
import type { DocData } from './context';
import { fillRandom } from './random-pool';

/**
 * Naming (frappe/model/naming.py): the name of a new document from its DocType's autoname rule.
 * Series counters live in the tenant's `tabSeries` and are incremented atomically.
 */

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** 10 base32hex characters: 3 from a wrapped decisecond clock (names roughly follow time) + 7 random. */
export function hashName(): string {
  const ticks = Math.floor(Date.now() / 100) % 32768;
  let out = BASE32HEX.charAt((ticks >> 10) & 31) + BASE32HEX.charAt((ticks >> 5) & 31) + BASE32HEX.charAt(ticks & 31);
  const bytes = new Uint8Array(7);
  fillRandom(bytes, 7);
  for (const b of bytes) out += BASE32HEX.charAt(b & 31);
  return out;
}

/** A UUID version 7 (RFC 9562): 48-bit millisecond time, then random bits. */
export function uuid7(): string {
  const bytes = Buffer.allocUnsafe(16);
  fillRandom(bytes, 16);
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms & 0xff;
    ms = Math.floor(ms / 256);
  }
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x70, 6);
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Next value of a named series counter, zero-padded to `digits`. */
export async function nextSeriesValue(q: Queryable, schema: string, key: string, digits: number): Promise<string> {
  const series = qualified(schema, 'tabSeries');
  const { rows } = await q.query<{ current: number }>(
    `INSERT INTO ${series} AS s ("name", "current") VALUES ($1, 1)
     ON CONFLICT ("name") DO UPDATE SET "current" = s."current" + 1 RETURNING "current"`,
    [key],
  );
  return String(rows[0]?.current ?? 1).padStart(digits, '0');
}

interface DateParts {
  YYYY: string;
  YY: string;
  MM: string;
  DD: string;
  WW: string;
}

function dateParts(): DateParts {
  const now = nowDatetime();
  const [y, m, d] = [now.slice(0, 4), now.slice(5, 7), now.slice(8, 10)];
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  const jan1 = Date.UTC(Number(y), 0, 1);
  const week = Math.floor((date.getTime() - jan1) / 86_400_000 / 7) + 1;
  return { YYYY: y, YY: y.slice(2), MM: m, DD: d, WW: String(week).padStart(2, '0') };
}

/** Old-style series (`ABC-.YYYY.-.####`): dot-separated parts, the first `#` run is the counter. */
export async function parseNamingSeries(q: Queryable, schema: string, series: string, doc: DocData): Promise<string> {
  const parts = series.includes('.') ? series.split('.') : [series];
  const dates = dateParts();
  let name = '';
  let counted = false;
  for (const part of parts) {
    if (part === '') continue;
    if (/^#+$/.test(part)) {
      if (!counted) {
        name += await nextSeriesValue(q, schema, name, part.length);
        counted = true;
      }
      continue;
    }
    const hashRun = /^([^#]*)(#+)$/.exec(part);
    if (hashRun && !counted && !series.includes('.')) {
      // `PRE-#####` without dots: prefix then counter
      const [, prefix = '', counter = ''] = hashRun;
      name += prefix;
      name += await nextSeriesValue(q, schema, name, counter.length);
      counted = true;
      continue;
    }
    if (part in dates) name += dates[part as keyof DateParts];
    else if (part === 'timestamp') name += String(Math.floor(Date.now() / 1000));
    else {
      const value = doc[part];
      name += typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : part;
    }
  }
  return name;
}

/** `format:PREFIX-{MM}-{fieldname}-{#####}`: braced tokens replaced, one `#` series keyed on the text before it. */
export async function parseFormat(q: Queryable, schema: string, format: string, doc: DocData): Promise<string> {
  const dates = dateParts();
  let name = '';
  let last = 0;
  for (const m of format.matchAll(/\{([^}]*)\}/g)) {
    name += format.slice(last, m.index);
    last = m.index + m[0].length;
    const token = m[1] ?? '';
    if (/^#+$/.test(token)) name += await nextSeriesValue(q, schema, name, token.length);
    else if (token in dates) name += dates[token as keyof DateParts];
    else if (token === 'timestamp') name += String(Math.floor(Date.now() / 1000));
    else if (token === 'hash') name += hashName();
    else {
      name += cstr(doc[token]);
    }
  }
  return name + format.slice(last);
}

async function amendedName(q: Queryable, meta: Meta, amendedFrom: string): Promise<string> {
  const { rows } = await q.query<{ amended_from: string | null }>(`SELECT "amended_from" FROM ${meta.table} WHERE "name" = $1`, [amendedFrom]);
  if (rows[0]?.amended_from) {
    const cut = amendedFrom.lastIndexOf('-');
    const id = Number(amendedFrom.slice(cut + 1));
    if (cut > 0 && Number.isInteger(id)) return `${amendedFrom.slice(0, cut)}-${id + 1}`;
  }
  return `${amendedFrom}-1`;
}

/** Sets `doc.name` for a new document (set_new_name), then validates it (validate_name). */
export async function setNewName(q: Queryable, schema: string, meta: Meta, doc: DocData, requestedName: unknown): Promise<void> {
  doc.name = await newName(q, schema, meta, doc, requestedName);
  validateName(meta, doc);
}

/** A client-chosen name: text only (Frappe refuses an integer for a varchar name column). */
function requestedText(meta: Meta, requested: unknown): string {
  if (requested === undefined || requested === null) return '';
  if (typeof requested === 'string') return requested.trim();
  if (typeof requested === 'number') {
    throw new NameError(`Invalid name type (integer) for varchar name column`, { title: 'Invalid Name' });
  }
  throw new ValidationError(`The name of a ${meta.name} must be text`, { title: 'Invalid Name' });
}

async function newName(q: Queryable, schema: string, meta: Meta, doc: DocData, requested: unknown): Promise<string | number> {
  if (meta.issingle) return meta.name;
  if (typeof doc.amended_from === 'string' && doc.amended_from !== '') return amendedName(q, meta, doc.amended_from);
  const given = requestedText(meta, requested);
  switch (meta.namingRule) {
    case 'autoincrement': {
      const { rows } = await q.query<{ id: number | string }>(`SELECT nextval($1::regclass) AS id`, [meta.sequence]);
      const id = rows[0]?.id;
      if (id === undefined) throw new Error(`nextval(${meta.sequence}) returned no row`);
      return Number(id);
    }
    case 'uuid':
      if (given === '') return uuid7();
      if (!UUID_RE.test(given)) throw new InvalidUUIDValue(`${given} is not a valid UUID`, { title: 'Invalid UUID' });
      return given.toLowerCase();
    case 'prompt':
      if (given === '') throw new ValidationError(`Please set the document name`, { title: 'Name Required' });
      return given;
    case 'field': {
      const field = meta.field(meta.namingArgument);
      const value = doc[meta.namingArgument];
      const text = cstr(value).trim();
      if (text === '') throw new ValidationError(`${field ? fieldLabel(field) : meta.namingArgument} is required`, { title: 'Name Required' });
      return text;
    }
    case 'naming_series': {
      const ns = meta.field('naming_series');
      let series = typeof doc.naming_series === 'string' ? doc.naming_series : '';
      if (series === '' && ns) series = selectOptions(ns)[0] ?? '';
      if (series === '') throw new ValidationError('Naming Series mandatory', { title: 'Naming Series' });
      doc.naming_series = series;
      return parseNamingSeries(q, schema, series.includes('#') ? series : `${series}.#####`, doc);
    }
    case 'format':
      return parseFormat(q, schema, meta.namingArgument, doc);
    case 'expression':
      return parseNamingSeries(q, schema, meta.namingArgument, doc);
    case 'hash':
    case 'single':
      return hashName();
  }
}

/** Frappe's validate_name: the name a document is about to be stored under. */
export function validateName(meta: Meta, doc: DocData): void {
  const name = doc.name;
  if (typeof name === 'number') return;
  const text = typeof name === 'string' ? name.trim() : '';
  if (text === '') throw new ValidationError(`No Name Specified for ${meta.name}`, { title: 'Name Required' });
  if (text.startsWith(`New ${meta.name}`)) {
    throw new NameError(`There were some errors setting the name, please contact the administrator`, { title: 'Invalid Name' });
  }
  if (!meta.issingle && text === meta.name && text !== 'DocType') throw new NameError(`Name of ${meta.name} cannot be ${text}`, { title: 'Invalid Name' });
  if (/[<>]/.test(text)) throw new NameError(`Name cannot contain special characters like < or >`, { title: 'Invalid Name' });
  if (text.includes('\0')) throw new NameError(`Name cannot contain a NUL character`, { title: 'Invalid Name' });
  if (pyLen(text) > 140) throw new NameError(`Name cannot be longer than 140 characters`, { title: 'Invalid Name' });
  doc.name = text;
}
