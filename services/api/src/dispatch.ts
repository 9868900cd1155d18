import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import { DoesNotExistError } from '@quire/errors';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import FindMyWay from 'find-my-way';
import { isPlainJsonBody, readJsonBody } from './http/json-body';

/** A route answered before express' router: its middlewares and handler, the same functions the express app mounts. */
export interface HotRoute {
  /** GET routes take requests without a body; POST and PUT a plain JSON one (json-body.ts), read before the chain. */
  method: 'GET' | 'POST' | 'PUT';
  /** find-my-way paths, e.g. `/api/resource/:doctype`; `*` is the rest of the path. */
  paths: readonly string[];
  /** express' `req.params` for the matched path (raw, before the query), its segments decoded as express' router decodes them. */
  params: (path: string) => Record<string, unknown>;
  /** Requests the route hands to express instead (a body to parse, a parameter it does not serve). */
  declines?: (req: IncomingMessage) => boolean;
  middlewares: readonly RequestHandler[];
  handler: (req: Request, res: Response) => Promise<void>;
}

type Matched = { route: HotRoute; path: string };

/**
 * The API's front door. The requests clients repeat most (read a document or a list, create or
 * update a document with a JSON body) are matched by find-my-way and run straight through their
 * middlewares and handler; everything else is the express app's. Both paths run the same functions: what this skips is express' per-request
 * prototype swap (see adopt), its router walking every layer and wrapping `next` per layer, and
 * its final handler. Together they cost more than the read itself (npm run bench -- reads).
 */
export function dispatcher(app: Express, routes: readonly HotRoute[], onError: ErrorRequestHandler, bodyLimit: number): RequestListener {
  const router = FindMyWay({ ignoreTrailingSlash: true, caseSensitive: true });
  for (const route of routes) {
    for (const path of route.paths) router.on(route.method, path, () => undefined, { route });
  }
  const expressApp = app as unknown as RequestListener;
  const trust = app.get('trust proxy fn') as TrustProxy;

  return (req: IncomingMessage, res: ServerResponse) => {
    const matched = match(router, req);
    if (!matched) {
      expressApp(req, res);
      return;
    }
    const { request, response } = adopt(req, res, matched.path, trust);
    const fail = (err: unknown) => onError(err, request, response, () => undefined);
    let params: Record<string, unknown>;
    try {
      params = matched.route.params(matched.path);
    } catch {
      fail(new DoesNotExistError('', { silent: true })); // a segment that does not percent-decode, as express answers it
      return;
    }
    request.params = params as Request['params'];
    if (matched.route.method === 'GET') {
      runChain(matched.route, request, response, fail);
      return;
    }
    readJsonBody(req, bodyLimit).then((body) => {
      request.body = body;
      runChain(matched.route, request, response, fail);
    }, fail);
  };
}

type TrustProxy = (address: string, hop: number) => boolean;

/**
 * A node request and response as the hot route's middlewares and handler use them: the few things
 * express' prototypes would give (query, path, secure, hostname, locals, the links between the
 * two) set as plain fields. Not express' `Object.setPrototypeOf` on both: measured, swapping the
 * prototypes of every request and response cost 40% of a bare read's throughput (node's own http
 * code then meets objects of a shape it was not optimised for).
 */
function adopt(req: IncomingMessage, res: ServerResponse, path: string, trust: TrustProxy): { request: Request; response: Response } {
  const request = req as Request & { secure: boolean; hostname: string | undefined; path: string };
  const response = res as Response;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const remote = req.socket.remoteAddress ?? '';
  const proxied = trust(remote, 0);
  Object.assign(request, {
    res: response,
    // express' `simple` query parser (its default) is node's querystring.parse.
    query: q === -1 ? {} : querystring.parse(url.slice(q + 1)),
    path,
    secure: protocolOf(req, proxied) === 'https',
    hostname: hostnameOf(req, proxied),
    body: undefined,
  });
  response.req = request;
  response.locals = Object.create(null) as Response['locals'];
  return { request, response };
}

/** express' `req.protocol`: X-Forwarded-Proto only from a trusted proxy. */
function protocolOf(req: IncomingMessage, proxied: boolean): string {
  const own = 'encrypted' in req.socket ? 'https' : 'http';
  const header = proxied ? req.headers['x-forwarded-proto'] : undefined;
  if (typeof header !== 'string' || header === '') return own;
  const comma = header.indexOf(',');
  return (comma === -1 ? header : header.slice(0, comma)).trim();
}

/** express' `req.hostname`: X-Forwarded-Host only from a trusted proxy, the port left out. */
function hostnameOf(req: IncomingMessage, proxied: boolean): string | undefined {
  const forwarded = proxied ? req.headers['x-forwarded-host'] : undefined;
  let host = req.headers.host;
  if (typeof forwarded === 'string' && forwarded !== '') {
    const comma = forwarded.indexOf(',');
    host = comma === -1 ? forwarded : forwarded.slice(0, comma).trimEnd();
  }
  if (!host) return undefined;
  const offset = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const colon = host.indexOf(':', offset);
  return colon === -1 ? host : host.slice(0, colon);
}

function match(router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, req: IncomingMessage): Matched | undefined {
  const method = req.method;
  if (method === 'GET') {
    // A body (rare on GET) goes through express' parsers.
    if ((req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined)
      return undefined;
  } else if (method === 'POST' || method === 'PUT') {
    if (!isPlainJsonBody(req)) return undefined;
  } else {
    return undefined;
  }
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const found = router.find(method, path);
  if (!found) return undefined;
  const { route } = found.store as { route: HotRoute };
  if (route.declines?.(req)) return undefined;
  return { route, path };
}

/** The route's middlewares in order, then its handler; the first error goes to `fail`. */
function runChain(route: HotRoute, req: Request, res: Response, fail: (err: unknown) => void): void {
  const { middlewares, handler } = route;
  let i = 0;
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== null) {
      fail(err);
      return;
    }
    const step = middlewares[i++];
    if (step) {
      try {
        void step(req, res, next);
      } catch (e) {
        fail(e);
      }
      return;
    }
    handler(req, res).catch(fail);
  };
  next();
}
