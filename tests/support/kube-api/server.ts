import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { discovery } from './discovery';
import { expired, KubeError, statusFor } from './errors';
import { mergePatch, jsonPatch } from './patch';
import { apiVersionOf, type ResourceType } from './resources';
import { parseRoute, type ResourceRoute } from './routes';
import { parseLabelSelector } from './selectors';
import { ObjectStore, type Subresource } from './store';
import { isObject, type Json, type JsonObject, type KubeObject } from './types';

export interface RequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  status: number;
}

export interface FakeKubeApiServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly store: ObjectStore;
  /** Every request in arrival order, with the status it got (200 for a watch that was opened). */
  readonly requests: RequestLogEntry[];
  /** Ends every open watch stream (the client sees the connection close). */
  dropWatches(): void;
  /** Watches from a resourceVersion older than `rv` get an ERROR 410 Expired event. */
  expireBefore(rv: number | string): void;
  /** Every resourceVersion older than the current one becomes 410 Expired. */
  compact(): void;
  /** The next `n` requests (those whose path matches `path`, when given) fail with `status` (a Status body with that code). */
  failNext(n: number, status?: number, message?: string, path?: RegExp): void;
  /**
   * Ends every open watch with an ERROR event `410 Expired` after compacting the history, as the real
   * server does when a watcher has fallen behind its watch cache: the client must relist.
   */
  expireWatches(): void;
  /** How many watch streams are open now. */
  openWatches(): number;
  close(): Promise<void>;
}

interface Faults {
  remaining: number;
  status: number;
  message: string | undefined;
  path: RegExp | undefined;
}

function send(res: http.ServerResponse, status: number, body: JsonObject): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new KubeError(400, `error decoding body: ${(err as Error).message}`, 'BadRequest');
  }
}

function listKind(type: ResourceType): string {
  return `${type.kind}List`;
}

function subresourceOf(route: ResourceRoute): Subresource {
  if (route.subresource === undefined) return undefined;
  if (route.subresource === 'status' && route.type.status) return 'status';
  throw new KubeError(404, 'the server could not find the requested resource', 'NotFound');
}

/** Starts the fake API server on 127.0.0.1 on a free port. */
export async function startFakeKubeApi(): Promise<FakeKubeApiServer> {
  const store = new ObjectStore();
  const requests: RequestLogEntry[] = [];
  const watches = new Map<() => void, (status: JsonObject) => void>();
  const faults: Faults = { remaining: 0, status: 500, message: undefined, path: undefined };

  function handleWatch(route: ResourceRoute, url: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
    const selector = parseLabelSelector(url.searchParams.get('labelSelector'));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    const write = (type: string, object: JsonObject): void => {
      if (!res.writableEnded) res.write(JSON.stringify({ type, object }) + '\n');
    };
    let unsubscribe = (): void => undefined;
    let timer: NodeJS.Timeout | undefined;
    const end = (): void => {
      unsubscribe();
      if (timer) clearTimeout(timer);
      watches.delete(end);
      if (!res.writableEnded) res.end();
    };
    try {
      unsubscribe = store.watch(
        { resource: route.type, namespace: route.namespace, selector, send: write },
        url.searchParams.get('resourceVersion') ?? undefined,
      );
    } catch (err) {
      if (!(err instanceof KubeError)) throw err;
      write('ERROR', err.toStatus()); // as the real server: 200, then an ERROR event, then the stream ends
      res.end();
      return;
    }
    watches.set(end, (status) => {
      write('ERROR', status);
      end();
    });
    req.on('close', end);
    res.on('close', end);
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    if (timeoutSeconds > 0) timer = setTimeout(end, timeoutSeconds * 1000);
  }

  function list(route: ResourceRoute, url: URL): JsonObject {
    const { items, resourceVersion } = store.list(route.type, route.namespace, parseLabelSelector(url.searchParams.get('labelSelector')));
    return { kind: listKind(route.type), apiVersion: apiVersionOf(route.type), metadata: { resourceVersion }, items };
  }

  function patch(route: ResourceRoute, name: string, namespace: string, url: URL, contentType: string, text: string): { status: number; body: KubeObject } {
    const subresource = subresourceOf(route);
    if (contentType === 'application/apply-patch+yaml') {
      if (!url.searchParams.get('fieldManager')) throw new KubeError(400, 'PATCH requests with apply must specify a fieldManager', 'BadRequest');
      let applied: Json;
      try {
        applied = parseYaml(text) as Json;
      } catch (err) {
        throw new KubeError(400, `error decoding YAML: ${(err as Error).message}`, 'BadRequest');
      }
      if (subresource === undefined && store.tryGet(route.type, namespace, name) === undefined) {
        if (!isObject(applied)) throw new KubeError(400, 'apply body must be an object', 'BadRequest');
        return { status: 201, body: store.create(route.type, namespace, mergePatch(applied, { metadata: { name } })) };
      }
      return { status: 200, body: store.patch(route.type, namespace, name, (current) => mergePatch(current, applied), subresource) };
    }
    const body = parseJson(text);
    if (contentType === 'application/merge-patch+json') {
      return { status: 200, body: store.patch(route.type, namespace, name, (current) => mergePatch(current, body), subresource) };
    }
    if (contentType === 'application/json-patch+json') {
      return { status: 200, body: store.patch(route.type, namespace, name, (current) => jsonPatch(current, body), subresource) };
    }
    if (contentType === 'application/strategic-merge-patch+json') {
      throw new KubeError(
        415,
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
        'UnsupportedMediaType',
      );
    }
    throw new KubeError(415, `the body of the request was in an unknown format: ${contentType}`, 'UnsupportedMediaType');
  }

  async function handleResource(
    route: ResourceRoute,
    method: string,
    url: URL,
    contentType: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<number> {
    const { type, name } = route;
    if (name === undefined) {
      if (method === 'GET') {
        const watch = url.searchParams.get('watch');
        if (watch === 'true' || watch === '1') {
          handleWatch(route, url, req, res);
          return 200;
        }
        send(res, 200, list(route, url));
        return 200;
      }
      if (method === 'POST' && route.namespace !== undefined) {
        const created = store.create(type, route.namespace, parseJson(await readBody(req)));
        send(res, 201, created);
        return 201;
      }
      throw new KubeError(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
    }
    if (type.namespaced && route.namespace === undefined) throw new KubeError(404, 'the server could not find the requested resource', 'NotFound');
    const namespace = route.namespace ?? '';
    const subresource = subresourceOf(route);
    switch (method) {
      case 'GET':
        send(res, 200, store.get(type, namespace, name));
        return 200;
      case 'PUT':
        send(res, 200, store.update(type, namespace, name, parseJson(await readBody(req)), subresource));
        return 200;
      case 'PATCH': {
        const result = patch(route, name, namespace, url, contentType, await readBody(req));
        send(res, result.status, result.body);
        return result.status;
      }
      case 'DELETE': {
        if (subresource !== undefined) throw new KubeError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed');
        const text = await readBody(req);
        const options = text.trim() === '' ? {} : parseJson(text);
        const pre = isObject(options) && isObject(options.preconditions) ? options.preconditions : {};
        const preconditions = {
          ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
          ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
        };
        send(res, 200, store.delete(type, namespace, name, preconditions));
        return 200;
      }
      default:
        throw new KubeError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed');
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<number> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const contentType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? '';
    if (faults.remaining > 0 && (faults.path === undefined || faults.path.test(url.pathname))) {
      faults.remaining--;
      await readBody(req);
      throw statusFor(faults.status, faults.message);
    }
    const route = parseRoute(url.pathname);
    if (route?.kind === 'discovery') {
      const doc = method === 'GET' ? discovery(route) : undefined;
      if (!doc) throw new KubeError(404, 'the server could not find the requested resource', 'NotFound');
      send(res, 200, doc);
      return 200;
    }
    if (!route) throw new KubeError(404, 'the server could not find the requested resource', 'NotFound');
    return handleResource(route, method, url, contentType, req, res);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type'],
      status: 0,
    };
    requests.push(entry);
    handle(req, res).then(
      (status) => {
        entry.status = status;
      },
      (err: unknown) => {
        const error = err instanceof KubeError ? err : new KubeError(500, err instanceof Error ? err.message : String(err));
        entry.status = error.code;
        if (!res.headersSent) send(res, error.code, error.toStatus());
        else res.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    store,
    requests,
    dropWatches() {
      for (const end of [...watches.keys()]) end();
    },
    expireWatches() {
      store.compact();
      const status = expired('too old resource version: the watch cache has moved on').toStatus();
      for (const fail of [...watches.values()]) fail(status);
    },
    expireBefore(rv) {
      store.expireBefore(Number(rv));
    },
    compact() {
      store.compact();
    },
    failNext(n, status = 500, message, path) {
      Object.assign(faults, { remaining: n, status, message, path });
    },
    openWatches() {
      return watches.size;
    },
    async close() {
      for (const end of [...watches.keys()]) end();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
