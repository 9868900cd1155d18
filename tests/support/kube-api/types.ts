/** JSON values as they travel over the wire. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** An object as stored: `metadata` is always present. */
export interface KubeObject extends JsonObject {
  metadata: JsonObject;
}

export function metaString(obj: KubeObject, field: string): string | undefined {
  const value = obj.metadata[field];
  return typeof value === 'string' ? value : undefined;
}

export function finalizersOf(obj: KubeObject): string[] {
  const value = obj.metadata.finalizers;
  return Array.isArray(value) ? value.filter((f): f is string => typeof f === 'string') : [];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'ERROR';
