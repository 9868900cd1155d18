import { describe, it, expect } from 'vitest';
import { PermissionError, type FrappeError } from '@quire/errors';
import { makePrincipal } from '@quire/permissions';
import { countStatement } from '../src/index';
import { ADMIN, MANAGER, NOBODY, OWNER, ctx, list, thrown } from './fixtures';

const ITEM_TABLE = '"t_test"."tabTask Item"';

describe('permission predicate', () => {
  it('read on all documents adds nothing', () => {
    expect(list({}, 'Task', MANAGER).text).toContain(' WHERE TRUE ');
    expect(list({}, 'Task', ADMIN).text).toContain(' WHERE TRUE ');
  });

  it("if_owner read restricts to the caller's documents, ANDed after the filters", () => {
    const q = list({ filters: { status: 'Open' }, or_filters: { qty: 1, amount: 2 } }, 'Task', OWNER);
    expect(q.text).toContain(' WHERE m."status" = $1::text AND (m."qty" = $2::bigint OR m."amount" = $3::numeric) AND m."owner" = $4 ORDER BY ');
    expect(q.values).toEqual(['Open', 1, 2, 'owner@example.com', 20, 0]);
  });

  it('a role granting everything wins over an if_owner role', () => {
    const both = makePrincipal('both@example.com', ['Owner Only', 'System Manager']);
    expect(list({}, 'Task', both).text).toContain(' WHERE TRUE ');
  });

  it('no read → 403 PermissionError', () => {
    const t = thrown(() => list({}, 'Task', NOBODY));
    expect(t.error).toBeInstanceOf(PermissionError);
    expect(t.status).toBe(403);
    expect((t.error as FrappeError).extra).toEqual({ _error_message: 'No permission for Task' });
    expect(thrown(() => countStatement({}, ctx('Task', NOBODY))).status).toBe(403);
  });

  it('permission is checked before the request is validated', () => {
    expect(thrown(() => list({ fields: '[[', filters: '{"nope":1}' }, 'Task', NOBODY)).status).toBe(403);
  });
});

describe('child-table lists', () => {
  it('need a parent DocType that owns the child table; scope comes from the parent', () => {
    const q = list({ fields: ['name', 'qty'], parent: 'Task' }, 'Task Item', MANAGER);
    expect(q.text).toBe(
      `SELECT m."name" AS "name", m."qty" AS "qty" FROM ${ITEM_TABLE} m WHERE m."parenttype" = $1 ORDER BY m."creation" DESC LIMIT $2 OFFSET $3`,
    );
    expect(q.values).toEqual(['Task', 20, 0]);
  });

  it('an owner scope on the parent restricts through EXISTS on the parent table', () => {
    const q = list({ filters: { qty: ['>', 1] }, parent: 'Task' }, 'Task Item', OWNER);
    expect(q.text).toContain(
      ' WHERE m."qty" > $1::bigint AND m."parenttype" = $2 AND EXISTS (SELECT 1 FROM "t_test"."tabTask" p WHERE p."name" = m."parent" AND p."owner" = $3) ORDER BY ',
    );
    expect(q.values).toEqual([1, 'Task', 'owner@example.com', 20, 0]);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['unknown', 'Nope'],
    ['not a parent of the child', 'Project'],
    ['the child itself', 'Task Item'],
    ['not a string', ['Task']],
  ])('parent %s → 403', (_label, parent) => {
    const t = thrown(() => list({ parent }, 'Task Item', MANAGER));
    expect(t.error).toBeInstanceOf(PermissionError);
    expect(t.status).toBe(403);
  });

  it('no read on the parent → 403', () => {
    const t = thrown(() => list({ parent: 'Task' }, 'Task Item', NOBODY));
    expect(t.error).toBeInstanceOf(PermissionError);
    expect(t.status).toBe(403);
  });

  it('count applies the same predicate', () => {
    const q = countStatement({ parent: 'Task', filters: [['item', 'like', 'a%']] }, ctx('Task Item', OWNER));
    expect(q.text).toBe(
      `SELECT count(*) AS "count" FROM ${ITEM_TABLE} m WHERE m."item" ILIKE $1::text AND m."parenttype" = $2 AND EXISTS (SELECT 1 FROM "t_test"."tabTask" p WHERE p."name" = m."parent" AND p."owner" = $3)`,
    );
    expect(thrown(() => countStatement({}, ctx('Task Item', MANAGER))).status).toBe(403);
  });
});
