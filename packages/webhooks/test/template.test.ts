import { describe, expect, it } from 'vitest';
import { checkTemplate, renderTemplate, TemplateError, TEMPLATE_PARSE_LIMIT } from '../src/template';

const doc = {
  name: 'SINV-0001',
  doctype: 'Sales Invoice',
  customer: 'ACME "Corp" <sales> & Sons\'',
  grand_total: 1500.5,
  docstatus: 1,
  is_return: 0,
  remarks: '',
  unicode: 'Zürich 🚀\n\u2028',
  nothing: null,
  meta: { region: 'EU', nested: { deep: [1, 2, { x: 'y' }] } },
  items: [
    { item_code: 'A', qty: 2, rate: 10 },
    { item_code: 'B', qty: 5, rate: 100 },
  ],
};

async function templateError(source: string, scope: Record<string, unknown> = { doc }): Promise<TemplateError> {
  try {
    await renderTemplate(source, scope);
  } catch (err) {
    expect(err).toBeInstanceOf(TemplateError);
    return err as TemplateError;
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
}

describe('renderTemplate', () => {
  it.each<[string, string]>([
    ['{{ doc.name }}', 'SINV-0001'],
    ['Invoice {{ doc.name }} for {{ doc.grand_total }}', 'Invoice SINV-0001 for 1500.5'],
    ['{{ doc.meta.region }}/{{ doc.meta.nested.deep[2].x }}', 'EU/y'],
    ['{{ doc.items[1].item_code }}', 'B'],
    ['{{ doc["name"] }}', 'SINV-0001'],
    ['{{ doc.items.size }} {{ doc.items.first.qty }} {{ doc.items.last.qty }}', '2 2 5'],
    ['{{ doc.missing }}|{{ doc.missing.deeper }}|{{ doc.nothing }}', '||'],
    ['{% for item in doc.items %}{{ item.item_code }}={{ item.qty }};{% endfor %}', 'A=2;B=5;'],
    ['{% for item in doc.items %}{{ forloop.index }}{% unless forloop.last %},{% endunless %}{% endfor %}', '1,2'],
    ['{% if doc.docstatus == 1 %}submitted{% else %}draft{% endif %}', 'submitted'],
    ['{% if doc.grand_total > 1000 and doc.is_return == 0 %}big{% endif %}', 'big'],
    ['{% if doc.is_return %}R{% else %}N{% endif %}', 'N'],
    ['{% if doc.remarks %}R{% else %}empty{% endif %}', 'empty'],
    ['{% assign total = 0 %}{% for i in doc.items %}{% assign total = total | plus: i.qty %}{% endfor %}{{ total }}', '7'],
    ['{{ doc.name | downcase }} {{ doc.name | upcase }} {{ doc.name | replace: "-", "/" }}', 'sinv-0001 SINV-0001 SINV/0001'],
    ['{{ doc.missing | default: "n/a" }}', 'n/a'],
    ['{{ doc.items | map: "item_code" | join: "," }}', 'A,B'],
    ['{{ doc.name | size }}', '9'],
    ['{% raw %}{{ not rendered }}{% endraw %}', '{{ not rendered }}'],
    ['{{ doc.customer }}', 'ACME "Corp" <sales> & Sons\''],
    ['plain text', 'plain text'],
    ['', ''],
  ])('%s', async (source, expected) => {
    expect(await renderTemplate(source, { doc })).toBe(expected);
  });

  it('renders a dynamic URL', async () => {
    const url = await renderTemplate('https://example.com/hooks/{{ doc.doctype | url_encode }}/{{ doc.name }}', { doc });
    expect(url).toBe('https://example.com/hooks/Sales+Invoice/SINV-0001');
  });

  it('renders a JSON body that parses back to the document values', async () => {
    const source = `{
      "name": {{ doc.name | tojson }},
      "customer": {{ doc.customer | tojson }},
      "total": {{ doc.grand_total | tojson }},
      "unicode": {{ doc.unicode | tojson }},
      "nothing": {{ doc.nothing | tojson }},
      "missing": {{ doc.missing | tojson }},
      "meta": {{ doc.meta | tojson }},
      "items": [{% for i in doc.items %}{"code": {{ i.item_code | json }}, "qty": {{ i.qty }}}{% unless forloop.last %},{% endunless %}{% endfor %}]
    }`;
    const body = await renderTemplate(source, { doc });
    expect(JSON.parse(body)).toEqual({
      name: doc.name,
      customer: doc.customer,
      total: 1500.5,
      unicode: doc.unicode,
      nothing: null,
      missing: null,
      meta: doc.meta,
      items: [
        { code: 'A', qty: 2 },
        { code: 'B', qty: 5 },
      ],
    });
  });

  it('tojson escapes markup characters like Jinja and supports an indent', async () => {
    expect(await renderTemplate('{{ doc.customer | tojson }}', { doc })).toBe('"ACME \\"Corp\\" \\u003csales\\u003e \\u0026 Sons\\u0027"');
    expect(await renderTemplate('{{ doc.meta.nested | tojson: 2 }}', { doc })).toBe(JSON.stringify(doc.meta.nested, null, 2));
    expect(await renderTemplate('{{ doc.items | json }}', { doc })).toBe(JSON.stringify(doc.items));
    expect(await renderTemplate('{{ true | tojson }}|{{ 3 | tojson }}|{{ nope | tojson }}', { doc })).toBe('true|3|null');
  });

  it('fails readably on circular data in tojson', async () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const err = await templateError('{{ doc | tojson }}', { doc: loop });
    expect(err.message).toMatch(/^Template error: .*circular/i);
  });

  it('only reads own properties', async () => {
    expect(await renderTemplate('[{{ doc.constructor.name }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.constructor }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.__proto__ }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc["__proto__"] }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.name.constructor }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.items.constructor.name }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.hasOwnProperty }}]', { doc })).toBe('[]');
    expect(await renderTemplate('[{{ doc.toString }}]', { doc })).toBe('[]');
    // A string's `length` is an own property, so it is readable (harmless).
    expect(await renderTemplate('[{{ doc.name.length }}]', { doc })).toBe('[9]');
    const inherited = Object.create({ secret: 'from prototype' }) as Record<string, unknown>;
    expect(await renderTemplate('[{{ doc.secret }}]', { doc: inherited })).toBe('[]');
  });

  it('cannot assign through the prototype chain', async () => {
    await renderTemplate('{% assign __proto__ = "x" %}{% assign constructor = "y" %}{{ __proto__ }}', { doc });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.prototype.toString.call({})).toBe('[object Object]');
  });

  it.each([
    ["{% include 'secrets' %}", /tag "include" not found/],
    ["{% include '/etc/passwd' %}", /tag "include" not found/],
    ["{% render 'x' %}", /tag "render" not found/],
    ["{% layout 'base' %}", /tag "layout" not found/],
  ])('refuses file access: %s', async (source, message) => {
    const err = await templateError(source);
    expect(err.message).toMatch(/^Invalid template: /);
    expect(err.message).toMatch(message);
    expect(() => checkTemplate(source)).toThrow(TemplateError);
  });

  it('stops a huge range by the memory limit', async () => {
    const started = Date.now();
    const err = await templateError('{% for i in (1..100000000) %}x{% endfor %}');
    expect(err.message).toMatch(/^Template error: memory alloc limit exceeded/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops a long-running render by the time limit', async () => {
    const started = Date.now();
    const err = await templateError('{% for i in (1..3000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}');
    expect(err.message).toMatch(/^Template error: .*limit exceeded/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops exponential string growth by the memory limit', async () => {
    const err = await templateError('{% assign s = "xxxxxxxxxx" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}');
    expect(err.message).toMatch(/memory alloc limit exceeded/);
  });

  it('resets the limits for every render', async () => {
    for (let i = 0; i < 5; i++) {
      expect(await renderTemplate('{% for i in (1..200000) %}{% endfor %}ok', { doc })).toBe('ok');
    }
  });

  it.each([
    ['{% if %}', /^Invalid template: /],
    ['{% if doc.name %}unclosed', /tag .*if.* not closed/],
    ['{% for x in doc.items %}', /not closed/],
    ['{% endif %}', /unexpected|not found/],
    ['{{ doc.name | no_such_filter }}', /undefined filter: no_such_filter/],
    ['{{ doc.name', /output .* not closed/],
    ['{% nosuchtag %}', /tag "nosuchtag" not found/],
  ])('reports syntax errors: %s', async (source, message) => {
    expect(() => checkTemplate(source)).toThrow(TemplateError);
    const err = await templateError(source);
    expect(err.message).toMatch(/^Invalid template: /);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('refuses a template longer than the parse limit', () => {
    const source = 'x'.repeat(TEMPLATE_PARSE_LIMIT + 1);
    expect(() => checkTemplate(source)).toThrow(/parse length limit exceeded/);
    expect(() => checkTemplate('x'.repeat(TEMPLATE_PARSE_LIMIT))).not.toThrow();
  });

  it('checkTemplate accepts valid templates without rendering', () => {
    expect(() => checkTemplate('{"name": {{ doc.name | tojson }}}')).not.toThrow();
    expect(() => checkTemplate('{% for i in (1..100000000) %}x{% endfor %}')).not.toThrow();
  });

  it('TemplateError is an Error with a name', async () => {
    const err = await templateError('{% if %}');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('TemplateError');
  });
});
