import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postDoctype, PY_NOTE } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * The Python frappe-client (frappe/frappe-client, frappeclient.py) cannot run here, so this is its
 * wire reproduced request by request as frappe-clients.md §5 records it: `requests.Session`
 * (cookies kept), Basic auth, `data=<json>` form bodies, `cmd` on `/`, trailing slashes on
 * get_api/post_api, Python json.dumps spacing, stringified values — and its post_process, which
 * raises only when the body has `exc`.
 */

class FrappeException extends Error {}

/** json.dumps with Python's default separators. */
function dumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(dumps).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${dumps(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}

/** The client's requests.Session: default headers, a cookie jar, form-encoded `data=`. */
class PythonFrappeClient {
  private cookies = new Map<string, string>();
  private readonly sessionHeaders: Record<string, string> = { 'User-Agent': 'python-requests/2.31.0', Accept: '*/*', 'Accept-Encoding': 'gzip, deflate' };
  private readonly headers = { Accept: 'application/json' };

  constructor(
    private readonly url: string,
    private readonly site: string,
  ) {}

  private async request(
    method: string,
    url: string,
    o: { params?: Record<string, string>; data?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    const target = new URL(url);
    for (const [k, v] of Object.entries(o.params ?? {})) target.searchParams.append(k, v);
    const headers: Record<string, string> = { ...this.sessionHeaders, ...(o.headers ?? {}), 'X-Frappe-Site-Name': this.site };
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (o.data) {
      body = new URLSearchParams(o.data).toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(target, { method, headers, ...(body !== undefined ? { body } : {}) });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const [name, value] = [pair!.slice(0, eq), pair!.slice(eq + 1)];
      if (/expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** post_process: raise only when `exc` is present; else `message`, else `data`. */
  private async postProcess(res: Response): Promise<unknown> {
    const rjson = (await res.json()) as Record<string, unknown>;
    if (rjson.exc) throw new FrappeException(typeof rjson.exc === 'string' ? rjson.exc : JSON.stringify(rjson.exc));
    if ('message' in rjson) return rjson.message;
    return rjson.data ?? null;
  }

  authenticate(key: string, secret: string): void {
    this.sessionHeaders.Authorization = `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;
  }

  async login(usr: string, pwd: string): Promise<unknown> {
    const res = await this.request('POST', this.url, { data: { cmd: 'login', usr, pwd }, headers: this.headers });
    const body = (await res.json()) as Record<string, unknown>;
    if (body.message !== 'Logged In') throw new Error('AuthError');
    return body;
  }

  async logout(): Promise<void> {
    await this.request('GET', this.url, { params: { cmd: 'logout' } });
  }

  async get_list(doctype: string, o: { fields?: string[]; filters?: unknown; limit_start?: number; limit_page_length?: number; order_by?: string } = {}) {
    const params: Record<string, string> = { fields: dumps(o.fields ?? ['*']) };
    if (o.filters) params.filters = dumps(o.filters);
    if (o.limit_page_length) {
      params.limit_start = String(o.limit_start ?? 0);
      params.limit_page_length = String(o.limit_page_length);
    }
    if (o.order_by) params.order_by = o.order_by;
    return this.postProcess(await this.request('GET', `${this.url}/api/resource/${doctype}`, { params, headers: this.headers }));
  }

  async insert(doc: Record<string, unknown>) {
    return this.postProcess(await this.request('POST', `${this.url}/api/resource/${encodeURIComponent(String(doc.doctype))}`, { data: { data: dumps(doc) } }));
  }

  async update(doc: Record<string, unknown>) {
    const url = `${this.url}/api/resource/${encodeURIComponent(String(doc.doctype))}/${encodeURIComponent(String(doc.name))}`;
    return this.postProcess(await this.request('PUT', url, { data: { data: dumps(doc) } }));
  }

  async get_doc(doctype: string, name = '') {
    return this.postProcess(await this.request('GET', `${this.url}/api/resource/${doctype}/${name.replace(/ /g, '%20')}`));
  }

  async get_value(doctype: string, fieldname?: string, filters?: unknown) {
    const params = { cmd: 'frappe.client.get_value', doctype, fieldname: fieldname ?? 'name', filters: dumps(filters ?? null) };
    return this.postProcess(await this.request('GET', this.url, { params }));
  }

  async set_value(doctype: string, docname: string, fieldname: string, value: unknown) {
    const data = { cmd: 'frappe.client.set_value', doctype, name: docname, fieldname, value: pythonStr(value) };
    return this.postProcess(await this.request('POST', this.url, { data }));
  }

  async delete(doctype: string, name: string) {
    return this.postProcess(await this.request('POST', this.url, { data: { cmd: 'frappe.client.delete', doctype, name } }));
  }

  async submit(doclist: Record<string, unknown>) {
    return this.postProcess(await this.request('POST', this.url, { data: { cmd: 'frappe.client.submit', doclist: dumps(doclist) } }));
  }

  async cancel(doctype: string, name: string) {
    return this.postProcess(await this.request('POST', this.url, { data: { cmd: 'frappe.client.cancel', doctype, name } }));
  }

  async rename_doc(doctype: string, old_name: string, new_name: string) {
    return this.postProcess(await this.request('POST', this.url, { data: { cmd: 'frappe.client.rename_doc', doctype, old_name, new_name } }));
  }

  async bulk_update(docs: Record<string, unknown>[]) {
    return this.postProcess(await this.request('POST', this.url, { data: { cmd: 'frappe.client.bulk_update', docs: dumps(docs) } }));
  }

  async get_api(method: string, params: Record<string, string> = {}) {
    return this.postProcess(await this.request('GET', `${this.url}/api/method/${method}/`, { params }));
  }

  async post_api(method: string, params: Record<string, string> = {}) {
    return this.postProcess(await this.request('POST', `${this.url}/api/method/${method}/`, { params }));
  }
}

/** Python's str() of a value, as the client sends set_value's value. */
function pythonStr(value: unknown): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null) return 'None';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || value === undefined) return String(value);
  // Objects and lists: their JSON text, the nearest a JS client gets to Python's repr.
  return JSON.stringify(value);
}

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('py');
  const created = await postDoctype(t, PY_NOTE);
  expect(created.status).toBe(200);
  await t.call('POST', '/api/resource/User', {
    json: { email: 'py@example.com', first_name: 'Py', new_password: 'snake case 42', roles: [{ role: 'System Manager' }] },
  });
});
afterAll(() => server.close());

describe('frappe-client, as it sends requests', () => {
  it('logs in with cmd=login on / and keeps the session cookie', async () => {
    const client = new PythonFrappeClient(server.url, t.name);
    await client.login('py@example.com', 'snake case 42');
    expect(await client.get_api('frappe.auth.get_logged_user')).toBe('py@example.com');
    await client.logout();
    await expect(client.get_api('frappe.auth.get_logged_user')).rejects.toThrow(FrappeException);
  });

  it('a failed login is an AuthError (the body says why)', async () => {
    const client = new PythonFrappeClient(server.url, t.name);
    await expect(client.login('py@example.com', 'wrong')).rejects.toThrow('AuthError');
  });

  it('Basic auth: insert, get_list, get_doc, update with data= forms', async () => {
    const client = new PythonFrappeClient(server.url, t.name);
    client.authenticate(t.api_key, t.api_secret);
    const inserted = (await client.insert({ doctype: 'Py Note', title: 'from python', count: 2 })) as Record<string, unknown>;
    expect(inserted).toMatchObject({ doctype: 'Py Note', title: 'from python', count: 2, docstatus: 0 });
    const list = await client.get_list('Py Note', { fields: ['name', 'title'], filters: { title: ['like', 'from%'] } });
    expect(list).toEqual([{ name: inserted.name, title: 'from python' }]);
    const paged = await client.get_list('Py Note', {
      fields: ['title'],
      filters: [['Py Note', 'count', '>=', 2]],
      limit_start: 0,
      limit_page_length: 1,
      order_by: 'title asc',
    });
    expect(paged).toEqual([{ title: 'from python' }]);
    const doc = (await client.get_doc('Py Note', String(inserted.name))) as Record<string, unknown>;
    // update sends the whole doc, modified included: the timestamp check passes
    const updated = (await client.update({ ...doc, title: 'updated from python' })) as Record<string, unknown>;
    expect(updated.title).toBe('updated from python');
    // the same stale doc again fails the timestamp check, and the client sees it because exc is set
    await expect(client.update({ ...doc, title: 'stale' })).rejects.toThrow(FrappeException);
  });

  it('cmd methods on /: get_value (filters=null and a dict), set_value with Python str(), rename, submit, cancel, bulk_update, delete', async () => {
    const client = new PythonFrappeClient(server.url, t.name);
    client.authenticate(t.api_key, t.api_secret);
    const doc = (await client.insert({ doctype: 'Py Note', title: 'values' })) as Record<string, string>;
    expect(await client.get_value('Py Note', 'title', { name: doc.name })).toEqual({ title: 'values' });
    expect(await client.get_value('User', 'name', null)).toBeTypeOf('object');
    const set = (await client.set_value('Py Note', doc.name!, 'public', true)) as Record<string, unknown>;
    expect(set.public).toBe(1);
    expect(await client.rename_doc('Py Note', doc.name!, 'renamed-note')).toBe('renamed-note');
    const fresh = (await client.get_doc('Py Note', 'renamed-note')) as Record<string, unknown>;
    const submitted = (await client.submit(fresh)) as Record<string, unknown>;
    expect(submitted.docstatus).toBe(1);
    await client.cancel('Py Note', 'renamed-note');
    expect(((await client.get_doc('Py Note', 'renamed-note')) as Record<string, unknown>).docstatus).toBe(2);
    const other = (await client.insert({ doctype: 'Py Note', title: 'bulk' })) as Record<string, string>;
    expect(await client.bulk_update([{ doctype: 'Py Note', docname: other.name, title: 'bulk updated' }])).toEqual({ failed_docs: [] });
    expect(await client.delete('Py Note', other.name!)).toBeNull();
    await expect(client.get_doc('Py Note', other.name)).rejects.toThrow(FrappeException);
  });

  it('post_api sends its arguments in the query string of an empty POST, to a path with a trailing slash', async () => {
    const client = new PythonFrappeClient(server.url, t.name);
    client.authenticate(t.api_key, t.api_secret);
    expect(await client.post_api('frappe.client.get_count', { doctype: 'User' })).toBe(3);
    expect(await client.get_api('frappe.client.get_count', { doctype: 'User' })).toBe(3);
  });

  it('every error body carries exc, so the client raises (permission, validation, missing, bad credentials)', async () => {
    const guest = new PythonFrappeClient(server.url, t.name);
    await expect(guest.get_list('Py Note')).rejects.toThrow(FrappeException);
    const client = new PythonFrappeClient(server.url, t.name);
    client.authenticate(t.api_key, t.api_secret);
    await expect(client.insert({ doctype: 'Py Note' })).rejects.toThrow(FrappeException);
    await expect(client.get_doc('Py Note', 'missing')).rejects.toThrow(FrappeException);
    const wrong = new PythonFrappeClient(server.url, t.name);
    wrong.authenticate(t.api_key, 'not-the-secret');
    await expect(wrong.get_list('Py Note')).rejects.toThrow(FrappeException);
  });
});
