import { describe, expect, it } from 'vitest';
import { Meta, TenantMeta, parseDefinition, type DocTypeInput } from '@quire/meta';
import { hasPermission, isOwnedBy, makePrincipal, ownerColumns } from '@quire/permissions';
import { listStatement, type ListParams } from '../src/index';

/**
 * Owner fields (an app's hooks `ownerFields`, kept on Meta): an `if_owner` right reaches the rows
 * whose owner or whose owner fields name the caller, in the document check and in every SQL row
 * condition (the list's WHERE, a child table's parent EXISTS, a Link join), with the user bound
 * as a parameter and the columns quoted.
 */

const SCHEMA = 't_owned';
const OWN = [
  { role: 'System Manager', read: 1, write: 1 },
  { role: 'Worker', read: 1, write: 1, if_owner: 1 },
];
const DEFINITIONS: DocTypeInput[] = [
  { name: 'Chore Step', istable: 1, fields: [{ fieldname: 'step', fieldtype: 'Data' }] },
  {
    name: 'Chore',
    permissions: OWN,
    fields: [
      { fieldname: 'title', fieldtype: 'Data' },
      { fieldname: 'assignee', fieldtype: 'Link', options: 'User' },
      { fieldname: 'reviewer', fieldtype: 'Link', options: 'User' },
      { fieldname: 'steps', fieldtype: 'Table', options: 'Chore Step' },
    ],
  },
  { name: 'Chore Log', permissions: [{ role: 'Worker', read: 1 }], fields: [{ fieldname: 'chore', fieldtype: 'Link', options: 'Chore' }] },
];
const DECLARED = new Map([['Chore', ['assignee', 'reviewer']]]);
const tenant = new TenantMeta(
  SCHEMA,
  DEFINITIONS.map((d) => {
    const def = parseDefinition(d);
    return new Meta(def, SCHEMA, DECLARED.get(def.name));
  }),
);
const WORKER = makePrincipal('w@example.com', ['Worker']);

function list(params: ListParams, doctype: string) {
  return listStatement(params, { meta: tenant.require(doctype), tenant, principal: WORKER, maxPageLength: 500, today: '2024-05-15' });
}

describe('owner fields in row conditions', () => {
  it('a list ORs the owner with each owner field, the user bound once per arm', () => {
    const q = list({ filters: { title: 'x' } }, 'Chore');
    expect(q.text).toContain(' WHERE m."title" = $1::text AND (m."owner" = $2 OR m."assignee" = $3 OR m."reviewer" = $4) ORDER BY ');
    expect(q.values.slice(0, 4)).toEqual(['x', 'w@example.com', 'w@example.com', 'w@example.com']);
  });

  it('a child table list reads its parent through the same rule', () => {
    const q = list({ parent: 'Chore' }, 'Chore Step');
    expect(q.text).toContain(
      ' EXISTS (SELECT 1 FROM "t_owned"."tabChore" p WHERE p."name" = m."parent" AND (p."owner" = $2 OR p."assignee" = $3 OR p."reviewer" = $4))',
    );
  });

  it('a Link join to an if_owner DocType joins only the rows that are the caller’s by the same rule', () => {
    const q = list({ fields: ['name', 'chore.title'] }, 'Chore Log');
    expect(q.text).toContain(' LEFT JOIN "t_owned"."tabChore" l1 ON l1."name" = m."chore" AND (l1."owner" = $1 OR l1."assignee" = $2 OR l1."reviewer" = $3)');
  });

  it('a DocType without owner fields keeps the plain owner condition', () => {
    const plain = new Meta(parseDefinition(DEFINITIONS[1]!), SCHEMA);
    expect(plain.ownerFields).toEqual([]);
    expect(ownerColumns(plain)).toEqual(['owner']);
  });
});

describe('owner fields on one document', () => {
  const chore = tenant.require('Chore');

  it('an if_owner right holds for the owner and for the user in any owner field, and no one else', () => {
    expect(hasPermission(chore, WORKER, 'write', { owner: 'w@example.com' })).toBe(true);
    expect(hasPermission(chore, WORKER, 'write', { owner: 'a@example.com', assignee: 'w@example.com' })).toBe(true);
    expect(hasPermission(chore, WORKER, 'read', { owner: 'a@example.com', reviewer: 'w@example.com' })).toBe(true);
    expect(hasPermission(chore, WORKER, 'read', { owner: 'a@example.com', assignee: 'b@example.com', title: 'w@example.com' })).toBe(false);
    expect(isOwnedBy(chore, { owner: 'a@example.com' }, 'w@example.com')).toBe(false);
  });

  it('Meta keeps only declared fields that are Links to User of its definition', () => {
    const meta = new Meta(parseDefinition(DEFINITIONS[1]!), SCHEMA, ['assignee', 'title', 'steps', 'missing', 'assignee']);
    expect(meta.ownerFields).toEqual(['assignee']);
    expect(ownerColumns(meta)).toEqual(['owner', 'assignee']);
  });
});
