import { cstr } from '@quire/frappe-compat';
import { PermissionError } from '@quire/errors';
import { RIGHTS, type Meta, type Right } from '@quire/meta';

/**
 * Roles and DocPerm evaluation (frappe/permissions.py): OR over the caller's roles' DocPerm rows
 * at permlevel 0; rights granted only through `if_owner` rows apply to the caller's own documents:
 * those whose `owner`, or one of the DocType's owner fields (Meta.ownerFields), is the caller.
 */

export const ADMINISTRATOR = 'Administrator';
export const GUEST = 'Guest';

/** Who is calling: a user and every role they hold, automatic ones (All, Guest, Desk User) included. */
export interface Principal {
  readonly user: string;
  readonly roles: ReadonlySet<string>;
  /** Sorted roles joined (and, for a scoped principal, its scopes), for caching evaluations. */
  readonly rolesKey: string;
  /**
   * OAuth scopes limiting what this caller may do on top of its roles (see scopedPrincipal);
   * undefined = unrestricted (sessions, API keys).
   */
  readonly scopes?: ReadonlySet<string>;
}

export function makePrincipal(user: string, roles: Iterable<string>): Principal {
  const all = new Set<string>(roles);
  all.add(GUEST);
  if (user !== GUEST) all.add('All');
  if (user === ADMINISTRATOR) all.add(ADMINISTRATOR);
  return { user, roles: all, rolesKey: [...all].sort().join('\n') };
}

export const GUEST_PRINCIPAL: Principal = makePrincipal(GUEST, [GUEST]);

export function isAdministrator(p: Principal): boolean {
  return p.user === ADMINISTRATOR;
}

// ------------------------------------------------------------------------------------ scopes

/** The scope that grants a token its user's full rights. */
export const ALL_SCOPE = 'all';

/**
 * The scope naming a DocType: lower-cased, whitespace as underscores, then `:read` or `:write`
 * (`todo:read`, `sales_invoice:write`). `write` implies `read`.
 */
export function doctypeScope(doctype: string, access: 'read' | 'write'): string {
  return `${doctype.toLowerCase().replace(/\s/g, '_')}:${access}`;
}

/** Rights a `<doctype>:read` scope allows; every other right needs `<doctype>:write`. */
const READ_RIGHTS: ReadonlySet<Right> = new Set<Right>(['read', 'select']);

/** What a set of scopes lets a caller do on one DocType (before its roles are considered). */
export function scopeAccess(scopes: ReadonlySet<string>, doctype: string): { read: boolean; write: boolean } {
  if (scopes.has(ALL_SCOPE)) return { read: true, write: true };
  const write = scopes.has(doctypeScope(doctype, 'write'));
  return { read: write || scopes.has(doctypeScope(doctype, 'read')), write };
}

/** Whether scopes allow a right on a DocType: read/select need `:read` or `:write`, the rest `:write`. */
export function scopeAllows(scopes: ReadonlySet<string>, doctype: string, right: Right): boolean {
  const access = scopeAccess(scopes, doctype);
  return READ_RIGHTS.has(right) ? access.read : access.write;
}

/** True when the caller's rights are narrowed by scopes (a token without `all`). */
export function isScopeRestricted(p: Principal): boolean {
  return p.scopes !== undefined && !p.scopes.has(ALL_SCOPE);
}

const UNSCOPED = Symbol('quire.unscoped');
type ScopedPrincipal = Principal & { readonly [UNSCOPED]?: Principal };

/**
 * The principal of a token: the user's roles, narrowed by `scopes` (a token never gets more
 * than its user has). `rolesKey` also names the scopes (and whether the user is Administrator,
 * whose rights are not role-derived), so per-rolesKey caches never mix scoped and unscoped
 * evaluations.
 */
export function scopedPrincipal(principal: Principal, scopes: Iterable<string>): Principal {
  const base = (principal as ScopedPrincipal)[UNSCOPED] ?? principal;
  const set: ReadonlySet<string> = new Set(scopes);
  const scoped: ScopedPrincipal = { user: base.user, roles: base.roles, rolesKey: scopedKey(base, set), scopes: set, [UNSCOPED]: base };
  return scoped;
}

// Role names cannot contain NUL (Postgres text cannot), so these keys never equal a plain rolesKey.
function scopedKey(base: Principal, scopes: ReadonlySet<string>): string {
  return `${base.rolesKey}\u0000${isAdministrator(base) ? 'admin' : 'roles'}\u0000${[...scopes].sort().join(' ')}`;
}

/** The cache key of a scoped evaluation (a principal built by hand with `scopes` gets one computed). */
function cacheKeyOf(p: Principal, scopes: ReadonlySet<string>): string {
  return (p as ScopedPrincipal)[UNSCOPED] ? p.rolesKey : scopedKey(unscoped(p), scopes);
}

/** The principal without its scopes (the user's own rights). */
function unscoped(p: Principal): Principal {
  const base = (p as ScopedPrincipal)[UNSCOPED];
  if (base) return base;
  return makePrincipal(p.user, p.roles);
}

/** A right held for every document, only for the caller's own documents, or not at all. */
export type Grant = 'all' | 'owner' | false;
export type Grants = Readonly<Record<Right, Grant>>;

/**
 * A memo per DocType and key (roles, scopes): grants and levels are computed once per Meta and
 * dropped with it when the tenant's metadata is reloaded.
 */
function metaMemo<V>(): (meta: Meta, key: string, compute: () => V) => V {
  const byMeta = new WeakMap<Meta, Map<string, V>>();
  return (meta, key, compute) => {
    let perKey = byMeta.get(meta);
    if (!perKey) byMeta.set(meta, (perKey = new Map<string, V>()));
    let value = perKey.get(key);
    if (value === undefined) perKey.set(key, (value = compute()));
    return value;
  };
}

const roleGrantsMemo = metaMemo<Grants>();
const scopedGrantsMemo = metaMemo<Grants>();

const NONE: Grants = Object.fromEntries(RIGHTS.map((r) => [r, false])) as Record<Right, Grant>;
const EVERYTHING: Grants = Object.fromEntries(RIGHTS.map((r) => [r, 'all'])) as Record<Right, Grant>;

/**
 * The caller's permlevel-0 rights on a DocType, narrowed by its scopes when it has any. Child
 * tables take their rights from the parent (callers pass the parent's meta).
 */
export function grantsOf(meta: Meta, principal: Principal): Grants {
  if (principal.scopes !== undefined && !principal.scopes.has(ALL_SCOPE)) return scopedGrants(meta, principal, principal.scopes);
  return roleGrants(meta, principal);
}

function scopedGrants(meta: Meta, principal: Principal, scopes: ReadonlySet<string>): Grants {
  return scopedGrantsMemo(meta, cacheKeyOf(principal, scopes), () => {
    const access = scopeAccess(scopes, meta.name);
    const grants: Record<Right, Grant> = { ...roleGrants(meta, unscoped(principal)) };
    for (const right of RIGHTS) if (!(READ_RIGHTS.has(right) ? access.read : access.write)) grants[right] = false;
    return grants;
  });
}

function roleGrants(meta: Meta, principal: Principal): Grants {
  if (isAdministrator(principal)) return EVERYTHING;
  return roleGrantsMemo(meta, principal.rolesKey, () => computeRoleGrants(meta, principal));
}

function computeRoleGrants(meta: Meta, principal: Principal): Grants {
  const grants: Record<Right, Grant> = { ...NONE };
  for (const perm of meta.permissions) {
    if (perm.permlevel !== 0 || !principal.roles.has(perm.role)) continue;
    for (const right of RIGHTS) {
      if (!perm[right]) continue;
      const grant: Grant = perm.if_owner && right !== 'create' ? 'owner' : 'all';
      if (grants[right] !== 'all') grants[right] = grant;
    }
  }
  if (!meta.isSubmittable) grants.submit = grants.cancel = grants.amend = false;
  // `select` is implied by read (frappe.permissions: select is a lesser right).
  if (grants.read && grants.select !== 'all') grants.select = grants.read;
  return grants;
}

/** A document, or as much of it as ownership needs: `owner` and the DocType's owner fields. */
export type OwnedDoc = Readonly<Record<string, unknown>>;

/** The columns that say whose a row is for `if_owner` rights: `owner`, then the DocType's owner fields. */
export function ownerColumns(meta: Meta): readonly string[] {
  return meta.ownerFields.length === 0 ? OWNER_ONLY : ['owner', ...meta.ownerFields];
}

const OWNER_ONLY: readonly string[] = ['owner'];

/** Whether `doc` is `user`'s for `if_owner` rights: its owner, or the user in one of its owner fields. */
export function isOwnedBy(meta: Meta, doc: OwnedDoc, user: string): boolean {
  return doc.owner === user || meta.ownerFields.some((f) => doc[f] === user);
}

export function hasPermission(meta: Meta, principal: Principal, right: Right, doc?: OwnedDoc): boolean {
  const grant = grantsOf(meta, principal)[right];
  if (grant === 'all') return true;
  if (grant === 'owner') return doc === undefined || isOwnedBy(meta, doc, principal.user);
  return false;
}

/** Throws Frappe's 403 unless the caller holds `right` (on `doc`, when given). */
export function checkPermission(meta: Meta, principal: Principal, right: Right, doc?: OwnedDoc & { name?: unknown }): void {
  if (hasPermission(meta, principal, right, doc)) return;
  const name = doc?.name === undefined ? undefined : cstr(doc.name);
  const target = name ? `<strong>${meta.name}</strong> ${name}` : `<strong>${meta.name}</strong>`;
  throw new PermissionError(`You need the '${right}' permission on ${target} to perform this action.`, {
    title: 'Insufficient Permission',
    extra: { _error_message: `No permission for ${meta.name}` },
  });
}

/** Which rows of a DocType the caller may read: the row predicate lists and gets apply. */
export function readScope(meta: Meta, principal: Principal): Grant {
  const g = grantsOf(meta, principal);
  if (g.read === 'all' || g.select === 'all') return 'all';
  return g.read || g.select;
}

export interface FieldLevels {
  read: ReadonlySet<number>;
  write: ReadonlySet<number>;
  /** Fields the caller may not read (permlevel not granted); empty for almost every caller. */
  hidden: ReadonlySet<string>;
}

const roleLevelsMemo = metaMemo<FieldLevels>();
const scopedLevelsMemo = metaMemo<FieldLevels>();

/**
 * Permlevels at which the caller may read / write fields (level 0 follows the doc-level right).
 * Scopes narrow them: without read access to the DocType only level 0 is readable, without
 * write access only level 0 is (nominally) writable — the doc-level check refuses it anyway.
 */
export function permittedLevels(meta: Meta, principal: Principal): FieldLevels {
  if (principal.scopes !== undefined && !principal.scopes.has(ALL_SCOPE)) return scopedLevelsOf(meta, principal, principal.scopes);
  // Administrator's levels are not role-derived: never shared with a user holding the same roles.
  const key = isAdministrator(principal) ? '\0Administrator' : principal.rolesKey;
  return roleLevelsMemo(meta, key, () => roleLevels(meta, principal));
}

function scopedLevelsOf(meta: Meta, principal: Principal, scopes: ReadonlySet<string>): FieldLevels {
  return scopedLevelsMemo(meta, cacheKeyOf(principal, scopes), () =>
    scopedLevels(meta, permittedLevels(meta, unscoped(principal)), scopeAccess(scopes, meta.name)),
  );
}

const LEVEL_ZERO: ReadonlySet<number> = new Set([0]);

function scopedLevels(meta: Meta, base: FieldLevels, access: { read: boolean; write: boolean }): FieldLevels {
  if (access.read && access.write) return base;
  const read = access.read ? base.read : LEVEL_ZERO;
  const write = access.write ? base.write : LEVEL_ZERO;
  if (read === base.read) return { read, write, hidden: base.hidden };
  const hidden = new Set<string>();
  for (const f of meta.fields) if (!read.has(f.permlevel ?? 0)) hidden.add(f.fieldname);
  return { read, write, hidden };
}

function roleLevels(meta: Meta, principal: Principal): FieldLevels {
  const read = new Set<number>([0]);
  const write = new Set<number>([0]);
  for (const perm of meta.permissions) {
    const level = perm.permlevel;
    if (level === 0) continue;
    if (!isAdministrator(principal) && !principal.roles.has(perm.role)) continue;
    if (perm.read || perm.write) read.add(level);
    if (perm.write) write.add(level);
  }
  if (isAdministrator(principal)) {
    for (const f of meta.fields) {
      read.add(f.permlevel ?? 0);
      write.add(f.permlevel ?? 0);
    }
  }
  const hidden = new Set<string>();
  for (const f of meta.fields) if (!read.has(f.permlevel ?? 0)) hidden.add(f.fieldname);
  return { read, write, hidden };
}
