import type { Meta } from '@quire/meta';
import { grantsOf, type Principal } from '@quire/permissions';
import { FILTER_OPERATORS } from '@quire/query';
import { componentName, createRequired, ref, type JsonSchema } from './schemas';

/**
 * The record API of one DocType, v1 (/api/resource) and v2 (/api/v2/document, /api/v2/doctype), as
 * the caller may use it: an operation for each right they hold (read, create, write, delete).
 */

type Operation = Record<string, unknown>;
export type PathItem = Record<string, Operation>;

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** A JSON-encoded query parameter (fields, filters): its value is JSON text of `schema`. */
function jsonParam(name: string, description: string, schema: JsonSchema, example?: unknown): Operation {
  return { name, in: 'query', description, content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } } };
}

const intParam = (name: string, description: string, extra: JsonSchema = {}): Operation => ({
  name,
  in: 'query',
  description,
  schema: { type: 'integer', minimum: 0, ...extra },
});

/** Frappe's filter shapes: `[[field, op, value]]`, `[[doctype, field, op, value]]`, or `{field: value | [op, value]}`. */
const FILTERS: JsonSchema = {
  oneOf: [
    {
      type: 'array',
      items: {
        type: 'array',
        minItems: 2,
        maxItems: 4,
        description: '[field, operator, value] or [doctype, field, operator, value]; operators: ' + FILTER_OPERATORS.join(', '),
      },
    },
    { type: 'object', additionalProperties: true, description: '{field: value} (equals) or {field: [operator, value]}' },
  ],
};

function listParameters(version: 'v1' | 'v2'): Operation[] {
  const params: Operation[] = [
    jsonParam(
      'fields',
      'Fields to answer (JSON array); `["*"]` for all, `count(name) as n` style aggregates allowed',
      { type: 'array', items: { type: 'string' } },
      ['name'],
    ),
    jsonParam('filters', 'Rows to keep (JSON): every condition holds', FILTERS, [['docstatus', '=', 0]]),
    jsonParam('or_filters', 'Rows to keep (JSON): any condition holds', FILTERS),
    { name: 'order_by', in: 'query', description: '`field [asc|desc]`, comma-separated', schema: { type: 'string' }, example: 'modified desc' },
    { name: 'group_by', in: 'query', schema: { type: 'string' } },
    {
      name: 'as_dict',
      in: 'query',
      description: 'false answers each row as an array of values in `fields` order',
      schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
    },
  ];
  if (version === 'v1') {
    params.push(
      intParam('limit_start', 'Rows to skip'),
      intParam('limit_page_length', 'Rows per page (20 by default; 0 for all, up to the server’s cap)'),
      intParam('limit', 'Same as limit_page_length'),
    );
  } else {
    params.push(intParam('start', 'Rows to skip'), intParam('limit', 'Rows per page (20 by default)'));
  }
  return params;
}

const NAME_PARAM: Operation = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'The document’s name (URL-encoded; a name holding `/` is sent as is after the DocType)',
  schema: { type: 'string' },
};

const ETAG_HEADER = { ETag: { description: 'The version of the document as this caller sees it', schema: { type: 'string' } } };

const errors = (version: 'v1' | 'v2', ...statuses: number[]): Record<string, unknown> =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/${version === 'v1' ? 'Error' : 'ErrorV2'}${s}` }]));

/** `{"data": <schema>}` */
const data = (schema: JsonSchema): JsonSchema => ({ type: 'object', properties: { data: schema }, required: ['data'] });

function pathSegment(doctype: string): string {
  return encodeURIComponent(doctype);
}

export interface RecordPaths {
  paths: Record<string, PathItem>;
}

/** The record API paths of one (non-child) DocType, for a caller with `grantsOf` rights on it. */
export function recordPaths(meta: Meta, principal: Principal): Record<string, PathItem> {
  const grants = grantsOf(meta, principal);
  const may = { read: Boolean(grants.read), create: Boolean(grants.create), write: Boolean(grants.write), delete: Boolean(grants.delete) };
  const schema = componentName(meta.name);
  const tags = [meta.name];
  const id = schema.replace(/[^A-Za-z0-9]/g, '');
  const out: Record<string, PathItem> = {};
  const seg = pathSegment(meta.name);
  const writeBody = (create: boolean) => ({
    required: true,
    content: json(create ? { allOf: [ref(`${schema}_Write`), { required: createRequired(meta, principal) }] } : ref(`${schema}_Write`)),
  });
  const ifMatch: Operation = {
    name: 'If-Match',
    in: 'header',
    description: 'Refuse the write (412) unless the document is still at this version (its ETag); `*` for any',
    schema: { type: 'string' },
  };
  const ifNoneMatch: Operation = {
    name: 'If-None-Match',
    in: 'header',
    description: 'Answer 304 when the document is still at this version',
    schema: { type: 'string' },
  };

  for (const version of ['v1', 'v2'] as const) {
    const prefix = version === 'v1' ? `/api/resource/${seg}` : `/api/v2/document/${seg}`;
    const v = version === 'v1' ? '' : 'V2';
    const readDoc = (opId: string): Operation => ({
      tags,
      operationId: opId,
      summary: `Get a ${meta.name}`,
      parameters: meta.issingle ? [ifNoneMatch] : [NAME_PARAM, ifNoneMatch],
      responses: {
        '200': { description: `The ${meta.name}`, headers: ETAG_HEADER, content: json(data(ref(schema))) },
        '304': { description: 'Not modified since the version in If-None-Match', headers: ETAG_HEADER },
        ...errors(version, 401, 403, 404),
      },
    });
    const writeDoc = (opId: string, summary: string): Operation => ({
      tags,
      operationId: opId,
      summary,
      parameters: meta.issingle ? [ifMatch] : [NAME_PARAM, ifMatch],
      requestBody: writeBody(false),
      responses: {
        '200': { description: `The ${meta.name} as saved`, headers: ETAG_HEADER, content: json(data(ref(schema))) },
        ...errors(version, 401, 403, 404, 412, 417),
      },
    });

    if (meta.issingle) {
      const item: PathItem = {};
      if (may.read) item.get = readDoc(`get${v}${id}`);
      if (may.write) {
        item.put = writeDoc(`update${v}${id}`, `Change the ${meta.name} settings (a merge)`);
        if (version === 'v2') item.patch = writeDoc(`patch${v}${id}`, `Change the ${meta.name} settings (a merge)`);
      }
      if (Object.keys(item).length > 0) out[`${prefix}/${seg}`] = item;
      continue;
    }

    const collection: PathItem = {};
    if (may.read) {
      collection.get = {
        tags,
        operationId: `list${v}${id}`,
        summary: `List ${meta.name} records`,
        parameters: listParameters(version),
        responses: {
          '200': { description: 'One page of rows', content: json(data({ type: 'array', items: { oneOf: [ref(`${schema}_Row`), { type: 'array' }] } })) },
          ...errors(version, 401, 403, 417),
        },
      };
    }
    if (may.create) {
      collection.post = {
        tags,
        operationId: `create${v}${id}`,
        summary: `Create a ${meta.name}`,
        description: version === 'v1' ? 'The body is the document (JSON), or a `data` field holding it as JSON text' : 'The body is the document itself',
        requestBody: writeBody(true),
        responses: {
          '200': { description: `The ${meta.name} as created`, headers: ETAG_HEADER, content: json(data(ref(schema))) },
          ...errors(version, 401, 403, 409, 417),
        },
      };
    }
    if (Object.keys(collection).length > 0) out[prefix] = collection;

    const document: PathItem = {};
    if (may.read) document.get = readDoc(`get${v}${id}`);
    if (may.write) {
      document.put = writeDoc(`update${v}${id}`, `Change a ${meta.name} (a merge: fields not sent are kept)`);
      if (version === 'v2') document.patch = writeDoc(`patch${v}${id}`, `Change a ${meta.name} (a merge: fields not sent are kept)`);
    }
    if (may.delete) {
      document.delete = {
        tags,
        operationId: `delete${v}${id}`,
        summary: `Delete a ${meta.name}`,
        parameters: [NAME_PARAM, ifMatch],
        responses: {
          '202': { description: 'Deleted', content: json(data({ const: 'ok' })) },
          ...errors(version, 401, 403, 404, 412, 417),
        },
      };
    }
    if (Object.keys(document).length > 0) out[`${prefix}/{name}`] = document;
  }

  if (may.read) {
    out[`/api/v2/doctype/${seg}/meta`] = {
      get: {
        tags,
        operationId: `metaV2${id}`,
        summary: `The ${meta.name} DocType (Frappe's meta dict)`,
        responses: {
          '200': { description: 'The DocType', content: json(data({ type: 'object', properties: { name: { const: meta.name } }, required: ['name'] })) },
          ...errors('v2', 401, 403, 404),
        },
      },
    };
    if (!meta.issingle) {
      out[`/api/v2/doctype/${seg}/count`] = {
        get: {
          tags,
          operationId: `countV2${id}`,
          summary: `Count ${meta.name} records`,
          parameters: [jsonParam('filters', 'Rows to count (JSON)', FILTERS), jsonParam('or_filters', 'Rows to count (JSON): any condition holds', FILTERS)],
          responses: { '200': { description: 'The number of rows', content: json(data({ type: 'integer', minimum: 0 })) }, ...errors('v2', 401, 403, 417) },
        },
      };
    }
  }
  return out;
}
