import type { LoadedApps, WhitelistedMethod } from '@quire/apps';
import { GUEST, isScopeRestricted, type Principal } from '@quire/permissions';
import { z } from 'zod';
import type { PathItem } from './record-paths';
import type { JsonSchema } from './schemas';

/**
 * Whitelisted methods as the caller may call them (a Guest only those open to Guests, a token of
 * limited scopes only those that allow it), at /api/method (`{"message": …}`) and /api/v2/method
 * (`{"data": …}`). A method that declares its arguments (whitelist's `args`, a zod schema) is
 * described by them; any other takes free-form arguments.
 */

/** JSON Schema of a zod schema, as OpenAPI 3.1 takes it (no `$schema` of its own). */
function fromZod(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const FREE_FORM: JsonSchema = { type: 'object', additionalProperties: true, description: 'The method’s arguments' };

/** A query parameter per property of an object schema; complex values travel as JSON text. */
function queryParameters(args: JsonSchema): Record<string, unknown>[] {
  const properties = (args.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((args.required ?? []) as string[]);
  return Object.entries(properties).map(([name, schema]) => {
    const simple = ['string', 'number', 'integer', 'boolean'].includes(String(schema.type));
    const param: Record<string, unknown> = { name, in: 'query', required: required.has(name) };
    if (simple) param.schema = schema;
    else param.content = { 'application/json': { schema } };
    return param;
  });
}

const HANDLER = 'frappe.handler.';

/**
 * Where a method is described: frappe.handler's commands at their bare names (`/api/method/ping`,
 * `login`, …), which routes/method.ts resolves to them and which frappe-js-sdk and frappe-client
 * call; every other method at its dotted path.
 */
function callPath(path: string): string {
  const cmd = path.slice(HANDLER.length);
  return path.startsWith(HANDLER) && !cmd.includes('.') ? cmd : path;
}

function callable(method: WhitelistedMethod, principal: Principal): boolean {
  if (principal.user === GUEST && !method.allowGuest) return false;
  if (isScopeRestricted(principal) && !method.allowScopedTokens) return false;
  return true;
}

export function methodPaths(apps: LoadedApps, principal: Principal): Record<string, PathItem> {
  const out: Record<string, PathItem> = {};
  for (const [path, method] of [...apps.methods].sort(([a], [b]) => a.localeCompare(b))) {
    if (!callable(method, principal)) continue;
    const args = method.args ? fromZod(method.args, 'input') : FREE_FORM;
    const returns = method.returns ? fromZod(method.returns, 'output') : {};
    const tag = path.split('.').slice(0, -1).join('.') || path;
    for (const version of ['v1', 'v2'] as const) {
      const key = version === 'v1' ? 'message' : 'data';
      const item: PathItem = {};
      for (const verb of method.methods) {
        if (verb === 'HEAD') continue;
        const lower = verb.toLowerCase();
        const operation: Record<string, unknown> = {
          tags: [tag],
          operationId: `${version === 'v1' ? '' : 'v2_'}${lower}_${path.replace(/\./g, '_')}`,
          summary: method.summary ?? path,
          responses: {
            '200': {
              description: `The method's answer in \`${key}\` (absent when it answers nothing)`,
              content: { 'application/json': { schema: { type: 'object', properties: { [key]: returns }, additionalProperties: true } } },
            },
            ...Object.fromEntries([401, 403, 417].map((s) => [String(s), { $ref: `#/components/responses/${version === 'v1' ? 'Error' : 'ErrorV2'}${s}` }])),
          },
        };
        if (method.allowGuest) operation.security = [{}];
        if (verb === 'GET' || verb === 'DELETE') {
          if (method.args) operation.parameters = queryParameters(args);
        } else {
          operation.requestBody = {
            required: false,
            content: { 'application/json': { schema: args }, 'application/x-www-form-urlencoded': { schema: args } },
          };
        }
        item[lower] = operation;
      }
      out[`${version === 'v1' ? '/api/method/' : '/api/v2/method/'}${callPath(path)}`] = item;
    }
  }
  return out;
}
