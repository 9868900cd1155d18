import { KubeError } from './errors';
import { clone, isObject, type Json, type JsonObject } from './types';

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(result, key);
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** 422 with the message shape of evanphx/json-patch, as the real server returns for any failed operation. */
function unprocessable(message: string): KubeError {
  return new KubeError(422, message, 'Invalid');
}

function decodePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw unprocessable(`invalid JSON pointer: ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

interface Location {
  parent: JsonObject | Json[];
  key: string;
}

function locate(doc: Json, path: string): Location {
  const parts = decodePointer(path);
  const last = parts.pop();
  if (last === undefined) throw unprocessable(`cannot operate on the document root: ${path}`);
  let node: Json | undefined = doc;
  for (const part of parts) {
    node = Array.isArray(node) ? node[Number(part)] : isObject(node) ? node[part] : undefined;
    if (node === undefined) throw unprocessable(`doc is missing path: "${path}": missing value`);
  }
  if (!Array.isArray(node) && !isObject(node)) throw unprocessable(`doc is missing path: "${path}": missing value`);
  return { parent: node, key: last };
}

function get(loc: Location): Json | undefined {
  if (Array.isArray(loc.parent)) return loc.parent[Number(loc.key)];
  return loc.parent[loc.key];
}

function arrayIndex(arr: Json[], key: string, forAdd: boolean): number {
  if (forAdd && key === '-') return arr.length;
  const index = Number(key);
  const max = forAdd ? arr.length : arr.length - 1;
  if (!/^\d+$/.test(key) || index > max) throw unprocessable(`Unable to access invalid index: ${key}`);
  return index;
}

function add(loc: Location, value: Json): void {
  if (Array.isArray(loc.parent)) loc.parent.splice(arrayIndex(loc.parent, loc.key, true), 0, value);
  else loc.parent[loc.key] = value;
}

function remove(loc: Location): Json {
  const current = get(loc);
  if (current === undefined) throw unprocessable(`unable to remove nonexistent key: ${loc.key}: missing value`);
  if (Array.isArray(loc.parent)) loc.parent.splice(arrayIndex(loc.parent, loc.key, false), 1);
  else Reflect.deleteProperty(loc.parent, loc.key);
  return current;
}

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: Json | undefined): Json | undefined {
  if (Array.isArray(value)) return value.map((v) => canonical(v) ?? null);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort()) out[key] = canonical(value[key]) ?? null;
    return out;
  }
  return value;
}

function field(op: JsonObject, name: string): string {
  const value = op[name];
  if (typeof value !== 'string') throw new KubeError(400, `json patch operation is missing "${name}"`, 'BadRequest');
  return value;
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). Fails as a whole, with 422, as the real server does. */
export function jsonPatch(doc: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw new KubeError(400, 'json patch must be an array of operations', 'BadRequest');
  const result = clone(doc);
  for (const raw of ops) {
    if (!isObject(raw)) throw new KubeError(400, 'json patch operation must be an object', 'BadRequest');
    const op = field(raw, 'op');
    const path = field(raw, 'path');
    const value = raw.value;
    switch (op) {
      case 'add':
        if (value === undefined) throw new KubeError(400, 'add operation does not apply: missing value', 'BadRequest');
        add(locate(result, path), clone(value));
        break;
      case 'remove':
        remove(locate(result, path));
        break;
      case 'replace': {
        if (value === undefined) throw new KubeError(400, 'replace operation does not apply: missing value', 'BadRequest');
        const loc = locate(result, path);
        if (get(loc) === undefined) throw unprocessable(`replace operation does not apply: doc is missing key: ${path}: missing value`);
        if (Array.isArray(loc.parent)) loc.parent[arrayIndex(loc.parent, loc.key, false)] = clone(value);
        else loc.parent[loc.key] = clone(value);
        break;
      }
      case 'move':
      case 'copy': {
        const from = locate(result, field(raw, 'from'));
        const moved = op === 'move' ? remove(from) : get(from);
        if (moved === undefined) throw unprocessable(`${op} operation does not apply: doc is missing from path: ${field(raw, 'from')}`);
        add(locate(result, path), clone(moved));
        break;
      }
      case 'test': {
        const actual = path === '' ? result : get(locate(result, path));
        if (!deepEqual(actual, value)) throw unprocessable(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw new KubeError(400, `Unexpected kind: ${op}`, 'BadRequest');
    }
  }
  return result;
}
