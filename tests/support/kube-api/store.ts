import { randomUUID } from 'node:crypto';
import { alreadyExists, conflict, expired, invalid, KubeError, notFound } from './errors';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType } from './resources';
import { matchesLabels, type LabelSelector } from './selectors';
import { clone, finalizersOf, isObject, metaString, type Json, type JsonObject, type KubeObject, type WatchEventType } from './types';

type ChangeType = Exclude<WatchEventType, 'ERROR'>;

interface StoredEvent {
  rv: number;
  type: ChangeType;
  resource: ResourceType;
  object: KubeObject;
}

/** A watch: events are delivered to `send` in resourceVersion order. */
export interface WatchSubscription {
  resource: ResourceType;
  namespace: string | undefined;
  selector: LabelSelector;
  send(type: ChangeType, object: KubeObject): void;
}

export type Subresource = 'status' | undefined;

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function keyOf(resource: ResourceType, namespace: string, name: string): string {
  return `${resource.group}/${resource.version}/${resource.resource}/${namespace}/${name}`;
}

/** Everything except metadata and status: what `metadata.generation` tracks. */
function specPart(obj: JsonObject): string {
  const { metadata: _m, status: _s, kind: _k, apiVersion: _a, ...rest } = obj;
  return JSON.stringify(rest);
}

function withoutResourceVersion(obj: KubeObject): string {
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return JSON.stringify({ ...obj, metadata });
}

function asKubeObject(body: Json, resource: ResourceType): KubeObject {
  if (!isObject(body)) throw new KubeError(400, `the body of the request was not a ${resource.kind} object`, 'BadRequest');
  const metadata = body.metadata ?? {};
  if (!isObject(metadata)) throw new KubeError(400, 'metadata must be an object', 'BadRequest');
  return { ...clone(body), metadata: clone(metadata) };
}

/**
 * The fake API server's state: objects keyed by group/version/resource/namespace/name, a global
 * resourceVersion counter, an event history for watches, and the compaction point below which a
 * watch gets 410 Expired.
 */
export class ObjectStore {
  private rv = 0;
  private readonly objects = new Map<string, KubeObject>();
  private history: StoredEvent[] = [];
  private compactedBefore = 0;
  private readonly watchers = new Set<WatchSubscription>();

  resourceVersion(): number {
    return this.rv;
  }

  /** Watches from a resourceVersion older than `rv` get 410 Expired from now on. */
  expireBefore(rv: number): void {
    this.compactedBefore = Math.max(this.compactedBefore, rv);
    this.history = this.history.filter((e) => e.rv > this.compactedBefore);
  }

  /** Like etcd compaction: every resourceVersion older than the current one becomes 410. */
  compact(): void {
    this.expireBefore(this.rv);
  }

  /** Every stored object, for assertions. */
  all(resource?: ResourceType): KubeObject[] {
    return [...this.objects.values()]
      .filter((o) => resource === undefined || (o.kind === resource.kind && o.apiVersion === apiVersionOf(resource)))
      .map((o) => clone(o));
  }

  list(resource: ResourceType, namespace: string | undefined, selector: LabelSelector): { items: KubeObject[]; resourceVersion: string } {
    const items = [...this.objects.entries()]
      .filter(([key]) => key.startsWith(`${resource.group}/${resource.version}/${resource.resource}/${namespace === undefined ? '' : `${namespace}/`}`))
      .map(([, obj]) => obj)
      .filter((obj) => matchesLabels(obj, selector))
      .map((obj) => clone(obj));
    return { items, resourceVersion: String(this.rv) };
  }

  get(resource: ResourceType, namespace: string, name: string): KubeObject {
    const obj = this.objects.get(keyOf(resource, namespace, name));
    if (!obj) throw notFound(resource, name);
    return clone(obj);
  }

  tryGet(resource: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const obj = this.objects.get(keyOf(resource, namespace, name));
    return obj ? clone(obj) : undefined;
  }

  create(resource: ResourceType, namespace: string, body: Json): KubeObject {
    const obj = asKubeObject(body, resource);
    let name = metaString(obj, 'name');
    const generateName = metaString(obj, 'generateName');
    if (!name && generateName) name = generateName + Math.random().toString(36).slice(2, 7);
    if (!name) throw invalid(resource, '', 'metadata.name: Required value: name or generateName is required');
    const bodyNamespace = metaString(obj, 'namespace');
    if (resource.namespaced && bodyNamespace && bodyNamespace !== namespace) {
      throw new KubeError(400, 'the namespace of the provided object does not match the namespace sent on the request', 'BadRequest');
    }
    if (this.objects.has(keyOf(resource, namespace, name))) throw alreadyExists(resource, name);
    const { resourceVersion: _rv, deletionTimestamp: _dt, uid: _uid, ...metadata } = obj.metadata;
    const created: KubeObject = {
      ...obj,
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      metadata: {
        ...metadata,
        name,
        ...(resource.namespaced ? { namespace } : {}),
        uid: randomUUID(),
        creationTimestamp: timestamp(),
        ...(resource.generation ? { generation: 1 } : {}),
      },
    };
    if (resource.status) delete created.status;
    return this.commit(resource, 'ADDED', created);
  }

  /** PUT: replaces the object (or only its status, for `/status`). */
  update(resource: ResourceType, namespace: string, name: string, body: Json, subresource: Subresource): KubeObject {
    const desired = asKubeObject(body, resource);
    const current = this.get(resource, namespace, name);
    const bodyName = metaString(desired, 'name');
    if (bodyName !== undefined && bodyName !== name) {
      throw new KubeError(400, `the name of the object (${bodyName}) does not match the name on the URL (${name})`, 'BadRequest');
    }
    if (metaString(desired, 'resourceVersion') === undefined && !resource.unconditionalUpdate) {
      throw invalid(resource, name, 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    }
    return this.write(resource, current, desired, subresource);
  }

  /** PATCH: `apply` computes the desired object from the current one. */
  patch(resource: ResourceType, namespace: string, name: string, apply: (current: KubeObject) => Json, subresource: Subresource): KubeObject {
    const current = this.get(resource, namespace, name);
    const desired = asKubeObject(apply(clone(current)), resource);
    return this.write(resource, current, desired, subresource);
  }

  delete(resource: ResourceType, namespace: string, name: string, preconditions?: { resourceVersion?: string; uid?: string }): KubeObject {
    const current = this.get(resource, namespace, name);
    if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== metaString(current, 'resourceVersion'))
      throw conflict(resource, name);
    if (preconditions?.uid !== undefined && preconditions.uid !== metaString(current, 'uid')) throw conflict(resource, name);
    if (finalizersOf(current).length > 0) {
      if (metaString(current, 'deletionTimestamp') !== undefined) return current;
      const marked: KubeObject = { ...current, metadata: { ...current.metadata, deletionTimestamp: timestamp(), deletionGracePeriodSeconds: 0 } };
      return this.commit(resource, 'MODIFIED', marked);
    }
    return this.remove(resource, current);
  }

  /** Events after `resourceVersion` are replayed, then live ones follow; throws 410 when it is compacted away. */
  watch(subscription: WatchSubscription, resourceVersion: string | undefined): () => void {
    const matches = (obj: KubeObject): boolean =>
      (subscription.namespace === undefined || metaString(obj, 'namespace') === subscription.namespace) && matchesLabels(obj, subscription.selector);
    if (resourceVersion === undefined || resourceVersion === '' || resourceVersion === '0') {
      for (const obj of this.list(subscription.resource, subscription.namespace, subscription.selector).items) subscription.send('ADDED', obj);
    } else {
      const from = Number(resourceVersion);
      if (!Number.isInteger(from)) throw new KubeError(400, `invalid resource version: ${resourceVersion}`, 'BadRequest');
      if (from < this.compactedBefore) throw expired(`too old resource version: ${from} (${this.compactedBefore})`);
      for (const event of this.history) {
        if (event.rv > from && event.resource === subscription.resource && matches(event.object)) subscription.send(event.type, clone(event.object));
      }
    }
    const live: WatchSubscription = {
      ...subscription,
      send: (type, obj) => {
        if (matches(obj)) subscription.send(type, obj);
      },
    };
    this.watchers.add(live);
    return () => this.watchers.delete(live);
  }

  private write(resource: ResourceType, current: KubeObject, desired: KubeObject, subresource: Subresource): KubeObject {
    const name = metaString(current, 'name') ?? '';
    const wanted = metaString(desired, 'resourceVersion');
    if (wanted !== undefined && wanted !== metaString(current, 'resourceVersion')) throw conflict(resource, name);
    let next: KubeObject;
    if (subresource === 'status') {
      next = clone(current);
      if (desired.status === undefined) delete next.status;
      else next.status = clone(desired.status);
    } else {
      const keep = ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'resourceVersion'];
      const metadata: JsonObject = { ...desired.metadata };
      for (const field of keep) {
        const value = current.metadata[field];
        if (value === undefined) Reflect.deleteProperty(metadata, field);
        else metadata[field] = value;
      }
      next = { ...desired, apiVersion: apiVersionOf(resource), kind: resource.kind, metadata };
      if (resource.status) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
      if (metaString(current, 'deletionTimestamp') !== undefined) {
        const added = finalizersOf(next).filter((f) => !finalizersOf(current).includes(f));
        if (added.length > 0)
          throw new KubeError(
            422,
            `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
            'Invalid',
          );
      }
    }
    if (withoutResourceVersion(next) === withoutResourceVersion(current)) return current; // a no-op write keeps the resourceVersion
    if (resource.generation && specPart(next) !== specPart(current)) {
      const generation = current.metadata.generation;
      next.metadata.generation = (typeof generation === 'number' ? generation : 0) + 1;
    }
    if (metaString(next, 'deletionTimestamp') !== undefined && finalizersOf(next).length === 0) {
      return this.remove(resource, next); // as the real server: the emptying update is not stored, the object is deleted
    }
    return this.commit(resource, 'MODIFIED', next);
  }

  private remove(resource: ResourceType, obj: KubeObject): KubeObject {
    const name = metaString(obj, 'name') ?? '';
    this.objects.delete(keyOf(resource, metaString(obj, 'namespace') ?? '', name));
    const deleted: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.emit(resource, 'DELETED', deleted);
    this.collectDependents(metaString(obj, 'uid'));
    return clone(deleted);
  }

  /** Background garbage collection: objects whose ownerReferences name a deleted uid are deleted too. */
  private collectDependents(uid: string | undefined): void {
    if (uid === undefined) return;
    for (const obj of [...this.objects.values()]) {
      const owners = obj.metadata.ownerReferences;
      if (!Array.isArray(owners) || !owners.some((o) => isObject(o) && o.uid === uid)) continue;
      const resource = RESOURCE_TYPES.find((t) => t.kind === obj.kind && apiVersionOf(t) === obj.apiVersion);
      const name = metaString(obj, 'name');
      if (resource && name !== undefined) this.delete(resource, metaString(obj, 'namespace') ?? '', name);
    }
  }

  /** Stores `obj` under a new resourceVersion and tells the watches. */
  private commit(resource: ResourceType, type: ChangeType, obj: KubeObject): KubeObject {
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(keyOf(resource, metaString(stored, 'namespace') ?? '', metaString(stored, 'name') ?? ''), stored);
    this.emit(resource, type, stored);
    return clone(stored);
  }

  private emit(resource: ResourceType, type: ChangeType, object: KubeObject): void {
    this.history.push({ rv: this.rv, type, resource, object: clone(object) });
    for (const watcher of this.watchers) {
      if (watcher.resource === resource) watcher.send(type, clone(object));
    }
  }
}
