import http from 'node:http';

/**
 * `fetch` for tenant hosts such as `http://acme.localhost:PORT/…`, which this machine's resolver
 * does not answer: the request goes to 127.0.0.1 with the URL's host in the Host header, as a
 * browser (which maps *.localhost to loopback itself) or a real DNS name would send it.
 */
export async function hostFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => {
    headers[key] = value;
  });
  headers.host = url.host;
  if (body) headers['content-length'] = String(body.length);
  return new Promise<Response>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: url.port || 80, method: request.method, path: `${url.pathname}${url.search}`, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) v.forEach((x) => out.append(k, x));
          else if (v !== undefined) out.set(k, v);
        }
        const status = res.statusCode ?? 500;
        const nullBody = status === 204 || status === 304 || request.method === 'HEAD';
        const response = new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: out });
        // Response.url is read-only; clients such as openid-client only read it for redirects.
        Object.defineProperty(response, 'url', { value: url.href });
        resolve(response);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.signal) init.signal.addEventListener('abort', () => req.destroy(new Error('aborted')));
    req.end(body);
  });
}
