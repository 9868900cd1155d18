import { Meta, parseDefinition, RIGHTS, type DocTypeInput, type Right } from '@quire/meta';
import { describe, expect, it } from 'vitest';
import {
  ADMINISTRATOR,
  ALL_SCOPE,
  checkPermission,
  doctypeScope,
  grantsOf,
  hasPermission,
  isScopeRestricted,
  makePrincipal,
  permittedLevels,
  readScope,
  scopeAllows,
  scopedPrincipal,
} from '../src/index';

/** OAuth scopes applied on top of role grants: a token never gets more than its user has. */

function meta(input: DocTypeInput): Meta {
  return new Meta(parseDefinition(input), 't_perm');
}

const FULL = { read: 1, write: 1, create: 1, delete: 1, submit: 1, cancel: 1, amend: 1, report: 1, export: 1, import: 1, share: 1, print: 1, email: 1 };

const todo = meta({
  name: 'ToDo',
  fields: [
    { fieldname: 'description', fieldtype: 'Text' },
    { fieldname: 'secret', fieldtype: 'Data', permlevel: 1 },
  ],
  permissions: [
    { role: 'System Manager', ...FULL },
    { role: 'Blogger', read: 1, write: 1, create: 1, if_owner: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
  ],
});

const invoice = meta({
  name: 'Sales Invoice',
  is_submittable: 1,
  fields: [{ fieldname: 'total', fieldtype: 'Currency' }],
  permissions: [{ role: 'Accounts User', ...FULL }],
});

const admin = makePrincipal(ADMINISTRATOR, ['System Manager']);
const manager = makePrincipal('manager@example.com', ['System Manager']);
const blogger = makePrincipal('blog@example.com', ['Blogger']);
const accountant = makePrincipal('acc@example.com', ['Accounts User']);

const WRITE_RIGHTS = RIGHTS.filter((r) => r !== 'read' && r !== 'select');

describe('doctypeScope', () => {
  it('lower-cases the DocType and turns spaces into underscores', () => {
    expect(doctypeScope('ToDo', 'read')).toBe('todo:read');
    expect(doctypeScope('Sales Invoice', 'write')).toBe('sales_invoice:write');
  });

  it('scopeAllows: read/select need :read or :write, everything else :write', () => {
    const read = new Set(['todo:read']);
    const write = new Set(['todo:write']);
    expect(scopeAllows(read, 'ToDo', 'read')).toBe(true);
    expect(scopeAllows(read, 'ToDo', 'select')).toBe(true);
    for (const r of WRITE_RIGHTS) expect(scopeAllows(read, 'ToDo', r)).toBe(false);
    for (const r of RIGHTS) expect(scopeAllows(write, 'ToDo', r)).toBe(true);
    for (const r of RIGHTS) expect(scopeAllows(new Set([ALL_SCOPE]), 'Anything', r)).toBe(true);
    expect(scopeAllows(new Set(['openid', 'profile', 'email']), 'ToDo', 'read')).toBe(false);
  });
});

describe('scopedPrincipal', () => {
  it('keeps the user and roles, records the scopes, and has a rolesKey of its own', () => {
    const p = scopedPrincipal(manager, ['todo:read', 'openid']);
    expect(p.user).toBe(manager.user);
    expect([...p.roles].sort()).toEqual([...manager.roles].sort());
    expect(p.scopes).toEqual(new Set(['todo:read', 'openid']));
    expect(p.rolesKey).not.toBe(manager.rolesKey);
    expect(scopedPrincipal(manager, ['openid', 'todo:read']).rolesKey).toBe(p.rolesKey);
    expect(scopedPrincipal(manager, ['todo:write']).rolesKey).not.toBe(p.rolesKey);
    expect(isScopeRestricted(p)).toBe(true);
    expect(isScopeRestricted(manager)).toBe(false);
    expect(isScopeRestricted(scopedPrincipal(manager, ['all']))).toBe(false);
  });

  it('re-scoping starts from the user again (scopes replace, never accumulate)', () => {
    const once = scopedPrincipal(manager, ['todo:read']);
    const twice = scopedPrincipal(once, ['todo:write']);
    expect(twice.scopes).toEqual(new Set(['todo:write']));
    expect(hasPermission(todo, twice, 'write')).toBe(true);
  });

  it('Administrator and a user with the very same roles never share a cached evaluation', () => {
    const lookalike = makePrincipal('lookalike@example.com', [...admin.roles]);
    expect(lookalike.rolesKey).toBe(admin.rolesKey);
    const a = scopedPrincipal(admin, ['sales_invoice:write']);
    const b = scopedPrincipal(lookalike, ['sales_invoice:write']);
    expect(a.rolesKey).not.toBe(b.rolesKey);
    expect(grantsOf(invoice, a).write).toBe('all');
    expect(grantsOf(invoice, b).write).toBe(false); // no Accounts User role
    // and unscoped field levels are not shared either
    const secretLevels = permittedLevels(todo, admin);
    expect(secretLevels.hidden.size).toBe(0);
    expect(permittedLevels(todo, lookalike).hidden.has('secret')).toBe(false); // System Manager reads level 1
  });
});

describe('grants with scopes', () => {
  it("all = the user's full rights, for Administrator and for a role-based user", () => {
    expect(grantsOf(todo, scopedPrincipal(admin, ['all']))).toEqual(grantsOf(todo, admin));
    expect(grantsOf(todo, scopedPrincipal(blogger, ['all', 'openid']))).toEqual(grantsOf(todo, blogger));
  });

  it('identity scopes give no DocType access, even to Administrator', () => {
    const p = scopedPrincipal(admin, ['openid', 'profile', 'email', 'offline_access']);
    for (const r of RIGHTS) expect(hasPermission(todo, p, r)).toBe(false);
    expect(readScope(todo, p)).toBe(false);
    expect(() => checkPermission(todo, p, 'read')).toThrow(/permission/);
  });

  it("Administrator's EVERYTHING is narrowed: :read allows read and select only", () => {
    const p = scopedPrincipal(admin, ['todo:read']);
    expect(hasPermission(todo, p, 'read')).toBe(true);
    expect(hasPermission(todo, p, 'select')).toBe(true);
    expect(readScope(todo, p)).toBe('all');
    for (const r of WRITE_RIGHTS) expect(hasPermission(todo, p, r)).toBe(false);
    // another DocType: nothing at all
    for (const r of RIGHTS) expect(hasPermission(invoice, p, r)).toBe(false);
  });

  it(':write implies read and allows every other right the user holds', () => {
    const p = scopedPrincipal(admin, ['sales_invoice:write']);
    for (const r of RIGHTS) expect(hasPermission(invoice, p, r)).toBe(true);
    for (const r of RIGHTS) expect(hasPermission(todo, p, r)).toBe(false);
  });

  it('never more than the user has: scopes only narrow role grants', () => {
    // The blogger holds owner-only rights on ToDo and none on Sales Invoice.
    const p = scopedPrincipal(blogger, ['todo:write', 'sales_invoice:write']);
    expect(grantsOf(todo, p).read).toBe('owner');
    expect(grantsOf(todo, p).write).toBe('owner');
    expect(grantsOf(todo, p).delete).toBe(false);
    expect(hasPermission(todo, p, 'write', { owner: blogger.user })).toBe(true);
    expect(hasPermission(todo, p, 'write', { owner: 'someone@else' })).toBe(false);
    for (const r of RIGHTS) expect(hasPermission(invoice, p, r)).toBe(false);
    // The accountant with todo:write still has nothing on ToDo.
    for (const r of RIGHTS) expect(hasPermission(todo, scopedPrincipal(accountant, ['todo:write']), r)).toBe(false);
  });

  it('a read scope keeps the owner restriction of the role grants', () => {
    const p = scopedPrincipal(blogger, ['todo:read']);
    expect(readScope(todo, p)).toBe('owner');
    expect(hasPermission(todo, p, 'read', { owner: blogger.user })).toBe(true);
    expect(hasPermission(todo, p, 'read', { owner: 'x' })).toBe(false);
    expect(hasPermission(todo, p, 'create')).toBe(false);
  });

  it('submit, cancel and amend need :write (on a submittable DocType)', () => {
    const read = scopedPrincipal(accountant, ['sales_invoice:read']);
    const write = scopedPrincipal(accountant, ['sales_invoice:write']);
    for (const r of ['submit', 'cancel', 'amend', 'import', 'share', 'export', 'print', 'email', 'report'] as Right[]) {
      expect(hasPermission(invoice, read, r)).toBe(false);
      expect(hasPermission(invoice, write, r)).toBe(true);
    }
  });

  it('unscoped principals are unchanged (sessions, API keys)', () => {
    expect(grantsOf(todo, admin).delete).toBe('all');
    expect(grantsOf(todo, blogger).read).toBe('owner');
    expect(grantsOf(invoice, accountant).submit).toBe('all');
  });

  it('a principal built by hand with scopes is narrowed too (and not confused with another)', () => {
    const handMade = { ...manager, scopes: new Set(['todo:read']) };
    const other = { ...manager, scopes: new Set(['todo:write']) };
    expect(hasPermission(todo, handMade, 'write')).toBe(false);
    expect(hasPermission(todo, other, 'write')).toBe(true);
    expect(hasPermission(todo, handMade, 'read')).toBe(true);
  });
});

describe('field levels with scopes', () => {
  it('without read access only level 0 is readable; without write access only level 0 is writable', () => {
    const none = permittedLevels(todo, scopedPrincipal(admin, ['openid']));
    expect(none.hidden.has('secret')).toBe(true);
    expect([...none.write]).toEqual([0]);

    const read = permittedLevels(todo, scopedPrincipal(admin, ['todo:read']));
    expect(read.hidden.has('secret')).toBe(false);
    expect([...read.write]).toEqual([0]);

    const write = permittedLevels(todo, scopedPrincipal(manager, ['todo:write']));
    expect(write).toEqual(permittedLevels(todo, manager));
    expect(write.write.has(1)).toBe(true);
  });

  it('scopes never reveal a level the user cannot read', () => {
    expect(permittedLevels(todo, scopedPrincipal(blogger, ['todo:write'])).hidden.has('secret')).toBe(true);
  });
});
