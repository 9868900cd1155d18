// @vitest-environment jsdom
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RichText } from '../../desk/src/form/richText';
import { relativeTime } from '../../desk/src/form/time';
import { versionLines } from '../../desk/src/form/versionLines';
import type { DocTypeMeta } from '../../desk/src/meta/types';

/** The timeline's pure parts: a comment's HTML drawn from an allow-list, a Version's diff in words, times. */

const rich = (html: string) => renderToStaticMarkup(createElement(RichText, { html }));

describe('a comment’s HTML', () => {
  it('keeps formatting and safe links, and nothing that runs or loads', () => {
    const out = rich(
      '<p>Use <strong>two</strong> coats<img src="x" onerror="alert(1)"><script>alert(2)</script></p>' +
        '<ul><li onclick="alert(3)">one</li></ul><iframe src="https://evil.example"></iframe>' +
        '<a href="javascript:alert(4)">bad link</a> <a href="https://example.com/a" onclick="alert(5)">good link</a>' +
        '<span style="background:url(https://evil.example/x)">styled</span><svg><script>alert(6)</script></svg>',
    );
    expect(out).toBe(
      '<p>Use <strong>two</strong> coats</p><ul><li>one</li></ul><span>bad link</span> ' +
        '<a href="https://example.com/a" rel="noopener noreferrer nofollow" target="_blank">good link</a><span>styled</span>',
    );
  });

  it('shows text as text', () => {
    expect(rich('<p>a &lt;b&gt; c</p>')).toBe('<p>a &lt;b&gt; c</p>');
    expect(rich('plain')).toBe('plain');
  });
});

const meta = {
  name: 'Order',
  module: 'Custom',
  istable: 0,
  issingle: 0,
  is_submittable: 0,
  fields: [
    { fieldname: 'customer', fieldtype: 'Data', label: 'Customer' },
    { fieldname: 'due_on', fieldtype: 'Date' },
    { fieldname: 'lines', fieldtype: 'Table', label: 'Lines', options: 'Order Line' },
  ],
  __perm: { rights: {}, write_levels: [0] },
} as unknown as DocTypeMeta;
const line = { ...meta, name: 'Order Line', istable: 1, fields: [{ fieldname: 'qty', fieldtype: 'Int', label: 'Quantity' }] } as unknown as DocTypeMeta;

describe('a Version in words', () => {
  it('names fields by their labels, counts rows, and leaves out fields the meta does not show', () => {
    const data = JSON.stringify({
      changed: [
        ['customer', 'Acme', 'Globex'],
        ['due_on', null, '2026-03-01'],
        ['secret_remark', 'a', 'b'],
      ],
      added: [
        ['lines', { name: 'r3' }],
        ['lines', { name: 'r4' }],
      ],
      removed: [['lines', { name: 'r1' }]],
      row_changed: [['lines', 0, 'r2', [['qty', 1, 5]]]],
    });
    expect(versionLines('Ada', data, meta, (n) => (n === 'Order Line' ? line : undefined))).toEqual([
      'Ada changed Customer from Acme to Globex',
      'Ada changed Due on from (empty) to 2026-03-01',
      'Ada added 2 rows to Lines',
      'Ada removed a row from Lines',
      'Ada changed: Lines row 1: Quantity from 1 to 5',
    ]);
  });

  it('reads a Version it cannot parse as no change', () => {
    expect(versionLines('Ada', 'not json', meta, () => undefined)).toEqual([]);
  });
});

describe('relative times', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  it('reads the platform’s UTC datetimes', () => {
    expect(relativeTime('2026-03-01 11:59:30.123456', now)).toBe('just now');
    expect(relativeTime('2026-03-01 11:57:00', now)).toBe('3 minutes ago');
    expect(relativeTime('2026-02-28 12:00:00', now)).toBe('yesterday');
  });
});
