import { PermissionError } from '@quire/errors';
import { RIGHTS, type Meta, type Right } from '@quire/meta';

/**
 * Roles and DocPerm evaluation (frappe/permissions.py): OR over the caller's roles' DocPerm rows
 * at permlevel 0; rights granted only through `if_owner` rows apply to the caller's own documents.
 */

export const ADMINISTRATOR = 'Administrator';
export const GUEST = 'Guest';

/** Who is calling: a user and every role they hold, automatic ones (All, Guest, Desk User) included. */
export interface Principal {
  readonly user: string;
  readonly roles: ReadonlySet<string>;
  /** Sorted roles joined, for caching evaluations per role set. */
  readonly rolesKey: string;
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

/** A right held for every document, only for the caller's own documents, or not at all. */
export type Grant = 'all' | 'owner' | false;
export type Grants = Readonly<Record<Right, Grant>>;

const cache = new WeakMap<Meta, Map<string, Grants>>();

const NONE: Grants = Object.fromEntries(RIGHTS.map((r) => [r, false])) as Record<Right, Grant>;
const EVERYTHING: Grants = Object.fromEntries(RIGHTS.map((r) => [r, 'all'])) as Record<Right, Grant>;

/** The caller's permlevel-0 rights on a DocType. Child tables take their rights from the parent. */
export function grantsOf(meta: Meta, principal: Principal): Grants {
  if (isAdministrator(principal)) return EVERYTHING;
  let perRoles = cache.get(meta);
  if (!perRoles) cache.set(meta, (perRoles = new Map()));
  const hit = perRoles.get(principal.rolesKey);
  if (hit) return hit;
  const grants: Record<Right, Grant> = { ...NONE };
  for (const perm of meta.permissions) {
    if ((perm.permlevel ?? 0) !== 0 || !principal.roles.has(perm.role)) continue;
    for (const right of RIGHTS) {
      if (!perm[right]) continue;
      const grant: Grant = perm.if_owner && right !== 'create' ? 'owner' : 'all';
      if (grants[right] !== 'all') grants[right] = grant;
    }
  }
  if (!meta.isSubmittable) grants.submit = grants.cancel = grants.amend = false;
  // `select` is implied by read (frappe.permissions: select is a lesser right).
  if (grants.read && grants.select !== 'all') grants.select = grants.read;
  perRoles.set(principal.rolesKey, grants);
  return grants;
}

export interface OwnedDoc {
  owner?: unknown;
}

export function hasPermission(meta: Meta, principal: Principal, right: Right, doc?: OwnedDoc): boolean {
  const grant = grantsOf(meta, principal)[right];
  if (grant === 'all') return true;
  if (grant === 'owner') return doc === undefined || doc.owner === principal.user;
  return false;
}

/** Throws Frappe's 403 unless the caller holds `right` (on `doc`, when given). */
export function checkPermission(meta: Meta, principal: Principal, right: Right, doc?: OwnedDoc & { name?: unknown }): void {
  if (hasPermission(meta, principal, right, doc)) return;
  const name = doc?.name === undefined ? undefined : String(doc.name);
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

const levelCache = new WeakMap<Meta, Map<string, FieldLevels>>();

/** Permlevels at which the caller may read / write fields (level 0 follows the doc-level right). */
export function permittedLevels(meta: Meta, principal: Principal): FieldLevels {
  let perRoles = levelCache.get(meta);
  if (!perRoles) levelCache.set(meta, (perRoles = new Map()));
  const hit = perRoles.get(principal.rolesKey);
  if (hit) return hit;
  const read = new Set<number>([0]);
  const write = new Set<number>([0]);
  for (const perm of meta.permissions) {
    const level = perm.permlevel ?? 0;
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
  const result = { read, write, hidden };
  perRoles.set(principal.rolesKey, result);
  return result;
}
