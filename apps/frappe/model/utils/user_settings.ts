import { whitelist, type MethodArgs, type MethodContext } from '@quire/apps';
import { qualified } from '@quire/db';
import { ValidationError } from '@quire/errors';
import { decodeJsonArg, isPlainObject } from '@quire/frappe-compat';

/**
 * frappe.model.utils.user_settings (Frappe's `__UserSettings`): what the desk remembers per user
 * and DocType (a list's columns, sort, page length, filters, last view), as one JSON object.
 *
 * - `get(doctype)` answers the stored settings as JSON text (Frappe answers a string), `"{}"` when none.
 * - `save(doctype, user_settings)` merges the given object into the stored one at the top level
 *   (Python's `dict.update`, as Frappe merges) and answers the merged settings. Frappe answers the
 *   object it was given; the merged one holds every given key with its given value, and tells the
 *   client what is now stored.
 *
 * Frappe keeps these in Redis and writes them to the table later; here they go to the tenant's
 * `__UserSettings` table at once (a migration of @quire/tenancy makes it), so there is nothing to
 * lose and nothing to sync. A tenant's users keep at most 64 KB per DocType.
 */

const MAX_SETTINGS_BYTES = 64 * 1024;

function doctypeArg(ctx: MethodContext, args: MethodArgs): string {
  const doctype = args.doctype;
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError('doctype is required', { title: 'Missing Argument' });
  // Settings are kept only for DocTypes that exist (404 otherwise), so the table cannot fill with arbitrary keys.
  return ctx.doc.meta.require(doctype).name;
}

function table(ctx: MethodContext): string {
  return qualified(ctx.doc.tenant.schema, '__UserSettings');
}

/** The stored settings as an object: none, or text that is not a JSON object (Frappe: "corrupt due to old code"), is `{}`. */
async function stored(ctx: MethodContext, doctype: string, forUpdate: boolean): Promise<Record<string, unknown>> {
  const { rows } = await ctx.doc.db.query<{ data: string }>(
    `SELECT "data" FROM ${table(ctx)} WHERE "user" = $1 AND "doctype" = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [ctx.doc.principal.user, doctype],
  );
  const text = rows[0]?.data;
  if (text === undefined) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : {};
  } catch {
    return {};
  }
}

/** get(doctype): the caller's settings for the DocType, as JSON text. */
export const get = whitelist(
  async (args, ctx) => {
    const doctype = doctypeArg(ctx, args);
    return JSON.stringify(await stored(ctx, doctype, false));
  },
  { methods: ['GET', 'POST'] },
);

/** save(doctype, user_settings): `user_settings` (a JSON object or its text) merged into the stored settings. */
export const save = whitelist(
  async (args, ctx) => {
    const doctype = doctypeArg(ctx, args);
    const given =
      args.user_settings === undefined || args.user_settings === null || args.user_settings === '' ? {} : decodeJsonArg('user_settings', args.user_settings);
    if (!isPlainObject(given)) throw new ValidationError('user_settings must be a JSON object', { title: 'Invalid Request' });
    return ctx.doc.db.transaction(async (tx) => {
      const inner: MethodContext = { ...ctx, doc: { ...ctx.doc, db: tx } };
      const merged = { ...(await stored(inner, doctype, true)), ...given };
      const data = JSON.stringify(merged);
      if (Buffer.byteLength(data, 'utf8') > MAX_SETTINGS_BYTES) {
        throw new ValidationError(`User settings of ${doctype} may not exceed ${MAX_SETTINGS_BYTES / 1024} KB`, { title: 'Too Large' });
      }
      await tx.query(
        `INSERT INTO ${table(ctx)} ("user", "doctype", "data") VALUES ($1, $2, $3)
         ON CONFLICT ("user", "doctype") DO UPDATE SET "data" = EXCLUDED."data"`,
        [ctx.doc.principal.user, doctype, data],
      );
      return merged;
    });
  },
  { methods: ['POST', 'PUT'] },
);
