import { buildTenantMeta, parseDefinition } from '@quire/meta';
import { describe, expect, it } from 'vitest';
import { versionDiff, versionJson } from '../src/versions';

const tenant = buildTenantMeta('t_versions', [
  parseDefinition({ name: 'Line', istable: 1, fields: [{ fieldname: 'item' }, { fieldname: 'qty', fieldtype: 'Int' }] }),
  parseDefinition({
    name: 'Order',
    track_changes: 1,
    fields: [
      { fieldname: 'title' },
      { fieldname: 'notes', fieldtype: 'Text Editor' },
      { fieldname: 'section', fieldtype: 'Section Break' },
      { fieldname: 'lines', fieldtype: 'Table', options: 'Line' },
    ],
  }),
]);
const order = tenant.require('Order');

const base = { name: 'O-1', owner: 'a', modified: '2026-01-01 00:00:00', modified_by: 'a', docstatus: 0, title: 'T', notes: null, lines: [] };

describe('versionDiff (Frappe get_diff)', () => {
  it('is nothing when only standard columns or blank-for-blank values change', () => {
    expect(versionDiff(tenant, order, base, { ...base, modified: '2026-02-02 00:00:00', modified_by: 'b', notes: '' })).toBeUndefined();
  });

  it('lists changed fields old and new, and docstatus', () => {
    expect(versionDiff(tenant, order, base, { ...base, title: 'U', notes: '<p>x</p>', docstatus: 1 })?.changed).toEqual([
      ['title', 'T', 'U'],
      ['notes', null, '<p>x</p>'],
      ['docstatus', 0, 1],
    ]);
  });

  it('lists rows added, removed and changed (with the row’s index among the new rows)', () => {
    const row = (name: string, item: string, qty: number, idx: number) => ({ name, item, qty, idx, parent: 'O-1', parentfield: 'lines', parenttype: 'Order' });
    const before = { ...base, lines: [row('r1', 'a', 1, 1), row('r2', 'b', 2, 2)] };
    const after = { ...base, lines: [row('r3', 'c', 3, 1), row('r1', 'a', 5, 2)] };
    const diff = versionDiff(tenant, order, before, after);
    expect(diff?.row_changed).toEqual([['lines', 1, 'r1', [['qty', 1, 5]]]]);
    expect(diff?.added).toEqual([['lines', expect.objectContaining({ name: 'r3', item: 'c', qty: 3, doctype: 'Line' })]]);
    expect(diff?.removed).toEqual([['lines', expect.objectContaining({ name: 'r2', item: 'b' })]]);
    expect(diff?.changed).toEqual([]);
  });

  it('is written as Frappe writes it: compact JSON, keys sorted', () => {
    const diff = versionDiff(tenant, order, base, { ...base, title: 'U' });
    expect(versionJson(diff!)).toBe('{"added":[],"changed":[["title","T","U"]],"data_import":null,"removed":[],"row_changed":[],"updater_reference":null}');
  });
});
