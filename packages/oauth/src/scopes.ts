import { ALL_SCOPE, doctypeScope, isScopeRestricted, scopeAccess, scopeAllows } from '@quire/permissions';

/**
 * OAuth scopes as Quire reads them:
 * - `all`: the user's full rights;
 * - `openid`, `profile`, `email`, `offline_access`: identity only (no DocType access);
 * - `<doctype>:read`, `<doctype>:write`: one DocType, its name lower-cased with spaces as
 *   underscores (`todo:read`, `sales_invoice:write`); write implies read.
 * A token never gets more than its user has: scopes only narrow the user's role grants. The rule
 * itself lives in @quire/permissions (which every permission check goes through, and which this
 * package builds on); these are the same functions, plus parsing.
 */
export { ALL_SCOPE, doctypeScope, isScopeRestricted, scopeAccess, scopeAllows };

/** Scopes that reveal identity only. */
export const IDENTITY_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'offline_access']);

/** A `scope` value (space-separated, RFC 6749 §3.3) as a set; anything not a string is no scope. */
export function parseScopes(text: unknown): Set<string> {
  const scopes = new Set<string>();
  if (typeof text !== 'string') return scopes;
  for (const s of text.split(/[ \t\r\n]+/)) if (s !== '') scopes.add(s);
  return scopes;
}

const DOCTYPE_SCOPE_RE = /^([a-z0-9_][a-z0-9_-]*):(read|write)$/;

/** The DocType part and access of a `<doctype>:read|write` scope, else undefined. */
export function parseDoctypeScope(scope: string): { doctype: string; access: 'read' | 'write' } | undefined {
  const m = DOCTYPE_SCOPE_RE.exec(scope);
  const [, doctype, access] = m ?? [];
  return doctype && (access === 'read' || access === 'write') ? { doctype, access } : undefined;
}

/** Whether a scope is one Quire understands (`all`, an identity scope, or `<doctype>:read|write`). */
export function isKnownScope(scope: string): boolean {
  return scope === ALL_SCOPE || IDENTITY_SCOPES.has(scope) || parseDoctypeScope(scope) !== undefined;
}
