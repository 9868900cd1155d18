import type { LoadedApps } from '@quire/apps';
import type { Meta, TenantMeta } from '@quire/meta';
import { doctypeScope, readScope, type Principal } from '@quire/permissions';
import { methodPaths } from './method-paths';
import { recordPaths, type PathItem } from './record-paths';
import { docTypeSchemas, type JsonSchema } from './schemas';

/**
 * The OpenAPI 3.1 description of a tenant's API as one caller may use it: the record API (v1 and
 * v2) of every DocType they may read, with a JSON Schema per DocType; the whitelisted methods they
 * may call; Frappe's error bodies; and the ways to authenticate (API key, Basic, session cookie,
 * the tenant's OAuth 2.0 / OpenID Connect service). Built from the tenant's metadata: a DocType
 * created or changed appears in the next one (the description is cached per metadata load and
 * caller's roles, and a metadata change is a new load).
 */

export interface OpenApiInput {
  tenant: { name: string };
  meta: TenantMeta;
  principal: Principal;
  apps: LoadedApps;
  /** The origin the caller reached the tenant at (`https://acme.example.com`). */
  origin: string;
  version: string;
}

/** The caller-specific, origin-free part, cached. */
interface Described {
  paths: Record<string, PathItem>;
  schemas: Record<string, JsonSchema>;
  tags: Array<{ name: string; description?: string }>;
  tagGroups: Array<{ name: string; tags: string[] }>;
  scopes: string[];
}

const cache = new WeakMap<TenantMeta, Map<string, Described>>();
const MAX_CALLERS = 200;

/** The DocTypes a caller may read and that have a record API of their own (child tables are read through their parent). */
function readable(meta: TenantMeta, principal: Principal): Meta[] {
  return [...meta.all()].filter((m) => !m.istable && readScope(m, principal) !== false).sort((a, b) => a.name.localeCompare(b.name));
}

function describe(input: OpenApiInput): Described {
  const { meta, principal, apps } = input;
  const schemas: Record<string, JsonSchema> = {};
  const paths: Record<string, PathItem> = {};
  const byModule = new Map<string, string[]>();
  const tags: Described['tags'] = [];
  const scopes: string[] = [];
  for (const m of readable(meta, principal)) {
    docTypeSchemas(meta, m, principal, schemas);
    Object.assign(paths, recordPaths(m, principal));
    const description = m.definition.description ?? undefined;
    tags.push({ name: m.name, ...(description ? { description } : {}) });
    const module = m.definition.module;
    byModule.set(module, [...(byModule.get(module) ?? []), m.name]);
    scopes.push(doctypeScope(m.name, 'read'), doctypeScope(m.name, 'write'));
  }
  const methods = methodPaths(apps, principal);
  Object.assign(paths, methods);
  const methodTags = [
    ...new Set(Object.values(methods).flatMap((item) => Object.values(item).flatMap((op) => (op.tags as string[] | undefined) ?? []))),
  ].sort();
  for (const t of methodTags) tags.push({ name: t });
  const tagGroups = [...byModule].sort(([a], [b]) => a.localeCompare(b)).map(([name, list]) => ({ name, tags: list }));
  if (methodTags.length > 0) tagGroups.push({ name: 'Methods', tags: methodTags });
  return { paths, schemas, tags, tagGroups, scopes };
}

function described(input: OpenApiInput): Described {
  let byCaller = cache.get(input.meta);
  if (!byCaller) cache.set(input.meta, (byCaller = new Map<string, Described>()));
  const key = `${input.principal.user}\n${input.principal.rolesKey}`;
  let found = byCaller.get(key);
  if (!found) {
    if (byCaller.size >= MAX_CALLERS) byCaller.clear();
    found = describe(input);
    byCaller.set(key, found);
  }
  return found;
}

const ERROR_V1: JsonSchema = {
  type: 'object',
  description: 'Frappe’s error body (frappe/utils/response.py::report_error)',
  properties: {
    exc_type: { type: 'string', description: 'The exception’s class, e.g. ValidationError' },
    exception: { type: 'string' },
    exc: { type: 'string', description: 'JSON text: a list of traceback texts (the exception line only, unless in developer mode)' },
    _server_messages: { type: 'string', description: 'JSON text: a list of JSON texts, each a message object' },
  },
  required: ['exc_type'],
  additionalProperties: true,
};

const ERROR_V2: JsonSchema = {
  type: 'object',
  description: 'Frappe’s v2 error body',
  properties: {
    errors: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          message: { type: 'string' },
          title: { type: 'string' },
          indicator: { type: 'string' },
          exception: { type: 'string', description: 'The traceback (the exception line only, unless in developer mode); absent for a 404' },
        },
        required: ['type'],
      },
    },
    messages: { type: 'array', items: { type: 'object' } },
  },
  required: ['errors'],
  additionalProperties: true,
};

const STATUS_TEXT: Record<number, string> = {
  401: 'Not authenticated (AuthenticationError)',
  403: 'Not permitted (PermissionError)',
  404: 'Not found (DoesNotExistError)',
  409: 'Duplicate name (DuplicateEntryError)',
  412: 'The document changed since the version in If-Match (PreconditionFailed)',
  417: 'Refused by validation (ValidationError and its kinds)',
};

function errorResponses(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(STATUS_TEXT)) {
    out[`Error${status}`] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/FrappeError' } } } };
    out[`ErrorV2${status}`] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/FrappeErrorV2' } } } };
  }
  return out;
}

export function openApiDocument(input: OpenApiInput): JsonSchema {
  const d = described(input);
  const { origin } = input;
  const scopes: Record<string, string> = {
    all: 'Everything the user may do',
    openid: 'Confirm who the user is',
    profile: 'The user’s name',
    email: 'The user’s email address',
    offline_access: 'Keep access (refresh tokens)',
  };
  for (const s of d.scopes) scopes[s] = s.endsWith(':read') ? `Read ${s.slice(0, -5)}` : `Write ${s.slice(0, -6)}`;
  return {
    openapi: '3.1.0',
    info: {
      title: `${input.tenant.name}: Quire API`,
      version: input.version,
      description:
        'The Frappe-compatible REST API of this site, generated from its DocTypes and whitelisted methods, as the caller who asked for it may use it. ' +
        'Errors use Frappe’s bodies: v1’s `exc_type`/`_server_messages`, v2’s `errors`.',
    },
    servers: [{ url: origin }],
    security: [{ token: [] }, { basic: [] }, { sid: [] }, { oauth2: [] }, { openIdConnect: [] }],
    tags: d.tags,
    'x-tagGroups': d.tagGroups,
    paths: d.paths,
    components: {
      schemas: { ...d.schemas, FrappeError: ERROR_V1, FrappeErrorV2: ERROR_V2 },
      responses: errorResponses(),
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`token <api_key>:<api_secret>` (User → API Access → Generate Keys)' },
        basic: { type: 'http', scheme: 'basic', description: 'The API key as user name and the API secret as password' },
        sid: {
          type: 'apiKey',
          in: 'cookie',
          name: 'sid',
          description: 'The session of a login (POST /api/method/login); writes also need X-Frappe-CSRF-Token',
        },
        oauth2: {
          type: 'oauth2',
          description: 'Access tokens of the site’s OAuth 2.0 service, sent as `Authorization: Bearer <token>`',
          flows: {
            authorizationCode: { authorizationUrl: `${origin}/oauth/auth`, tokenUrl: `${origin}/oauth/token`, refreshUrl: `${origin}/oauth/token`, scopes },
            clientCredentials: { tokenUrl: `${origin}/oauth/token`, scopes },
          },
        },
        openIdConnect: { type: 'openIdConnect', openIdConnectUrl: `${origin}/.well-known/openid-configuration` },
      },
    },
  };
}
