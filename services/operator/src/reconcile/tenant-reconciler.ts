import type { V1Ingress, V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { ApiCredentials } from '@quire/documents';
import { DoesNotExistError, DuplicateEntryError, ValidationError } from '@quire/errors';
import { ADMINISTRATOR } from '@quire/permissions';
import {
  createTenant,
  customDomains,
  DEFAULT_CLUSTER,
  dropTenant,
  setTenantDomains,
  setTenantStatus,
  tenantName,
  updateTenantConfig,
  type Platform,
  type Tenant,
} from '@quire/tenancy';
import type { Logger } from 'pino';
import type { ClusterApi } from '../kube/cluster';
import { describe, isConflict } from '../kube/errors';
import type { EventRecorder } from '../kube/events';
import type { WatchedCache } from '../kube/informer';
import {
  API_VERSION,
  FINALIZER,
  KIND,
  readSpec,
  type Condition,
  type ConditionType,
  type TenantResource,
  type TenantSpec,
  type TenantStatus,
  type TenantUsageStatus,
} from '../tenant-resource';
import { adminSecretNameOf, credentialsIn, isOperatorSecret, newAdminSecret } from './admin-secret';
import { readyCondition, statusChanged, withConditions, type ConditionInput } from './conditions';
import { desiredIngress, ingressNameOf, ingressUpToDate, type IngressConfig } from './ingress';
import { MOVE_RECHECK_MS, moveCondition, unfinishedMove, unfinishedMoveCondition, type TenantMoves, type UnfinishedMove } from './moves';
import type { UsageReadings } from './usage';

/**
 * `done`: in line with its spec. `invalid`: the spec cannot be served as written (status says why);
 * not retried until it changes. `gone`: deleted. A throw is a transient failure, retried with backoff;
 * a ConflictError (409, a stale resourceVersion) is retried at once.
 */
export type ReconcileOutcome = 'done' | 'invalid' | 'gone';

export class ConflictError extends Error {}

export interface ReconcilerDeps {
  platform: Platform;
  api: ClusterApi;
  ingresses: WatchedCache<V1Ingress>;
  secrets: WatchedCache<V1Secret>;
  events: EventRecorder;
  ingress: IngressConfig;
  usage: UsageReadings;
  /** The moves between clusters spec.cluster asks for, run in the background. */
  moves: TenantMoves;
  /** Reconciles the Tenant again after `ms` (a move's wait is over, or worth looking at again). */
  requeue: (resource: TenantResource, ms: number) => void;
  logger: Logger;
}

/** How the tenant came to be this resource's: made by it, or found existing and adopted. */
type Origin = 'Created' | 'Adopted';

interface SchemaState {
  condition: ConditionInput;
  tenant?: Tenant;
  adminSecretName?: string;
  /** ClusterReady when the tenant could not be created because of its cluster (UnknownCluster, ClusterDraining...). */
  cluster?: ConditionInput;
}

/**
 * Brings one Tenant resource and the world in line, idempotently (it runs again after every change,
 * every relist and every resync): finalizer, tenant (created on its cluster, or adopted), CORS
 * origins, suspension, plan, custom domains and their Ingress, the admin Secret, its cluster (moved
 * there when it is on another), then status with the tenant's usage.
 * Deletion runs the finalizer's cleanup.
 */
export class TenantReconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  async reconcile(resource: TenantResource): Promise<ReconcileOutcome> {
    if (resource.metadata?.deletionTimestamp) return this.finalize(resource);
    const current = await this.ensureFinalizer(resource);
    const name = current.metadata?.name ?? '';
    const read = readSpec(current);
    const invalidName = nameProblem(name);
    if (invalidName !== undefined || 'invalid' in read) {
      const message = invalidName ?? ('invalid' in read ? read.invalid : '');
      const reason = invalidName !== undefined ? 'InvalidName' : 'InvalidSpec';
      this.deps.events.warning(current, reason, 'Validate', message);
      await this.writeStatus(current, { condition: { type: 'SchemaReady', status: 'False', reason, message } }, waitingForTenant());
      return 'invalid';
    }
    const { spec } = read;
    const schema = await this.ensureTenant(current, spec);
    if (!schema.tenant) {
      await this.writeStatus(current, schema, waitingForTenant(schema.cluster));
      return 'invalid';
    }
    await this.ensureCorsOrigins(current, schema.tenant, spec);
    await this.ensureStatus(current, schema.tenant, spec);
    const plan = await this.ensurePlan(current, schema.tenant, spec);
    const domains = await this.ensureDomains(current, schema.tenant, spec);
    const tenant = this.deps.platform.tenants.get(name) ?? schema.tenant;
    const cluster = await this.ensureCluster(current, tenant, spec);
    const parts = [domains, plan, cluster];
    await this.writeStatus(current, { ...schema, tenant }, parts, await this.deps.usage.statusOf(tenant));
    return parts.every((c) => c.status === 'True') ? 'done' : 'invalid';
  }

  /** After a transient failure: Ready=False with what went wrong, the other conditions kept. Best effort. */
  async recordFailure(resource: TenantResource, err: unknown): Promise<void> {
    const message = `Reconcile failed, retrying: ${describeError(err)}`;
    this.deps.events.warning(resource, 'ReconcileFailed', 'Reconcile', message);
    const status = resource.status ?? {};
    const conditions = withConditions(
      status.conditions,
      [{ type: 'Ready', status: 'False', reason: 'ReconcileFailed', message }],
      resource.metadata?.generation,
      new Date(),
    );
    try {
      if (statusChanged(status, { ...status, conditions })) await this.deps.api.patchTenantStatus(resource.metadata?.name ?? '', { ...status, conditions });
    } catch (e) {
      this.deps.logger.debug({ err: describe(e) }, 'could not record the failure in status');
    }
  }

  // ---- finalizer ----

  private async ensureFinalizer(resource: TenantResource): Promise<TenantResource> {
    const finalizers = resource.metadata?.finalizers ?? [];
    if (finalizers.includes(FINALIZER)) return resource;
    return this.patchFinalizers(resource, [...finalizers, FINALIZER]);
  }

  /** A merge patch carrying the resourceVersion: a concurrent writer's finalizer is never overwritten (409 instead). */
  private async patchFinalizers(resource: TenantResource, finalizers: string[]): Promise<TenantResource> {
    try {
      return await this.deps.api.patchTenant(resource.metadata?.name ?? '', { metadata: { resourceVersion: resource.metadata?.resourceVersion, finalizers } });
    } catch (err) {
      if (isConflict(err)) throw new ConflictError(`Tenant ${resource.metadata?.name ?? ''} changed meanwhile`);
      throw err;
    }
  }

  private async finalize(resource: TenantResource): Promise<ReconcileOutcome> {
    const finalizers = resource.metadata?.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return 'gone';
    const name = resource.metadata?.name ?? '';
    const read = readSpec(resource);
    // An unreadable spec cannot ask for deletion: data is dropped only when `Delete` is spelled out.
    const policy = 'spec' in read ? read.spec.deletionPolicy : 'Retain';
    if (nameProblem(name) === undefined) {
      await this.deps.api.deleteIngress(ingressNameOf(name));
      const secret = await this.deps.api.readSecret(adminSecretNameOf(name));
      if (isOperatorSecret(secret)) await this.deps.api.deleteSecret(adminSecretNameOf(name));
      // Only a tenant this resource made or adopted is dropped, never one it never got to manage.
      if (policy === 'Delete' && originOf(resource) !== undefined) {
        // Dropped mid-move, its replication (a slot holding WAL on the source) would be left behind.
        const moving = this.deps.moves.get(name);
        if (moving?.running) throw new Error(`Tenant ${name} is being moved to cluster ${moving.to}: it is dropped once the move is done`);
        try {
          await dropTenant(this.deps.platform, name);
          this.deps.events.normal(resource, 'Deleted', 'Delete', `Dropped tenant ${name} and all of its data (deletionPolicy: Delete)`);
        } catch (err) {
          if (!(err instanceof DoesNotExistError)) throw err;
        }
      } else {
        this.deps.events.normal(resource, 'Retained', 'Delete', `Kept tenant ${name} and its data (deletionPolicy: ${policy}); removed its Ingress and Secret`);
      }
    }
    await this.patchFinalizers(
      resource,
      finalizers.filter((f) => f !== FINALIZER),
    );
    return 'gone';
  }

  // ---- the tenant ----

  private async ensureTenant(resource: TenantResource, spec: TenantSpec): Promise<SchemaState> {
    const name = resource.metadata?.name ?? '';
    const { platform } = this.deps;
    let tenant = platform.tenants.get(name);
    if (!tenant) {
      const created = await this.createTenant(resource, spec);
      if ('condition' in created) return created;
      tenant = platform.tenants.get(name);
      if (!tenant) throw new Error(`Tenant ${name} is not in the registry after it was created`);
      if (created.created) return this.schemaState(tenant, 'Created', true);
    }
    const origin = originOf(resource) ?? (await this.discoverOrigin(resource, tenant));
    return this.schemaState(tenant, origin, origin === 'Created' && isOperatorSecret(await this.cachedSecret(adminSecretNameOf(name))));
  }

  /**
   * The Secret first (or the one a previous attempt left), then the tenant with its key pair, so the
   * plain secret is never only in memory. `created: false` when the tenant appeared meanwhile.
   */
  private async createTenant(resource: TenantResource, spec: TenantSpec): Promise<{ created: boolean } | SchemaState> {
    const name = resource.metadata?.name ?? '';
    // Nothing is made (not even the Secret) for a tenant that cannot go where spec.cluster says.
    if (spec.cluster !== undefined) {
      const problem = await this.clusterProblem(spec.cluster);
      if (problem) return this.notPlaced(resource, name, problem);
    }
    const secretName = adminSecretNameOf(name);
    let secret = await this.deps.api.readSecret(secretName);
    if (secret && !isOperatorSecret(secret)) {
      return failed('SecretConflict', `Secret ${secretName} exists and was not made by the operator; rename or delete it`);
    }
    let credentials: ApiCredentials | undefined = secret ? credentialsIn(secret) : undefined;
    if (!credentials) {
      if (secret) await this.deps.api.deleteSecret(secretName); // ours, but unreadable: issue a new pair
      const fresh = newAdminSecret(name, ownerOf(resource));
      try {
        secret = await this.deps.api.createSecret(fresh.secret);
        credentials = fresh.credentials;
      } catch (err) {
        if (isConflict(err)) throw new ConflictError(`Secret ${secretName} was created meanwhile`);
        throw err;
      }
    }
    try {
      const created = await createTenant(this.deps.platform, { name, adminEmail: spec.adminEmail, adminCredentials: credentials, cluster: spec.cluster });
      this.deps.events.normal(
        resource,
        'Created',
        'Provision',
        `Created tenant ${name} (schema ${created.schema}) on cluster ${created.cluster}; its Administrator key is in Secret ${secretName}`,
      );
      return { created: true };
    } catch (err) {
      if (err instanceof DuplicateEntryError) {
        await this.deps.platform.tenants.refreshOne(name);
        return { created: false }; // made meanwhile (by the CLI?): adopted below
      }
      // The registry changed since it was checked above: the cluster was removed or drained meanwhile,
      // or (placed by weight) every cluster is draining.
      if (spec.cluster !== undefined && err instanceof DoesNotExistError) {
        return this.notPlaced(resource, name, { reason: 'UnknownCluster', message: `spec.cluster: ${(err as Error).message}` });
      }
      if (err instanceof ValidationError && err.title === 'Cluster Draining') {
        return this.notPlaced(resource, name, { reason: 'ClusterDraining', message: `spec.cluster: ${err.message}` });
      }
      if (err instanceof ValidationError && err.title === 'No Cluster Available') {
        return this.notPlaced(resource, name, { reason: 'NoClusterAvailable', message: err.message });
      }
      if (err instanceof ValidationError) return failed('InvalidSpec', (err as Error).message);
      throw err;
    }
  }

  /**
   * A tenant that exists when its resource has no recorded origin: ours if the operator's Secret holds
   * a key pair that signs in as its Administrator (a create whose status write was lost), else adopted.
   */
  private async discoverOrigin(resource: TenantResource, tenant: Tenant): Promise<Origin> {
    const secretName = adminSecretNameOf(tenant.name);
    const secret = await this.deps.api.readSecret(secretName);
    const credentials = isOperatorSecret(secret) ? credentialsIn(secret) : undefined;
    if (credentials) {
      const principal = await this.deps.platform.apiKeys.authenticate(tenant, credentials.api_key, credentials.api_secret);
      if (principal?.user === ADMINISTRATOR) return 'Created';
      await this.deps.api.deleteSecret(secretName);
      this.deps.events.warning(resource, 'StaleCredentials', 'Adopt', `Deleted Secret ${secretName}: its key pair does not sign in to tenant ${tenant.name}`);
    }
    this.deps.events.normal(
      resource,
      'Adopted',
      'Adopt',
      `Tenant ${tenant.name} already existed: adopted with its data, users and keys (no credentials Secret is issued); the spec's domains, CORS origins, suspension and plan now apply`,
    );
    return 'Adopted';
  }

  private schemaState(tenant: Tenant, origin: Origin, secretExists: boolean): SchemaState {
    const message =
      origin === 'Created'
        ? `Tenant ${tenant.name} (schema ${tenant.schema}) was created for this resource`
        : `Tenant ${tenant.name} (schema ${tenant.schema}) existed before this resource and was adopted`;
    return {
      condition: { type: 'SchemaReady', status: 'True', reason: origin, message },
      tenant,
      ...(secretExists ? { adminSecretName: adminSecretNameOf(tenant.name) } : {}),
    };
  }

  private async cachedSecret(name: string): Promise<V1Secret | undefined> {
    const { secrets, api } = this.deps;
    return secrets.problem === undefined ? secrets.get(name, api.namespace) : api.readSecret(name);
  }

  // ---- settings, domains, Ingress ----

  private async ensureCorsOrigins(resource: TenantResource, tenant: Tenant, spec: TenantSpec): Promise<void> {
    const current = tenant.config.allow_cors;
    const have = current === undefined ? [] : Array.isArray(current) ? current : [current];
    if (sameSet(have, spec.allowCorsOrigins)) return;
    await updateTenantConfig(this.deps.platform, tenant.name, { allow_cors: spec.allowCorsOrigins });
    this.deps.events.normal(resource, 'CorsOriginsUpdated', 'Configure', `allow_cors = ${spec.allowCorsOrigins.join(', ') || '(none)'}`);
  }

  /** `spec.suspended` / `spec.readOnly` as the tenant's status, announced to every process. */
  private async ensureStatus(resource: TenantResource, tenant: Tenant, spec: TenantSpec): Promise<void> {
    const wanted = spec.suspended ? 'suspended' : spec.readOnly ? 'read_only' : 'active';
    if (tenant.status === wanted) return;
    await setTenantStatus(this.deps.platform, tenant.name, wanted);
    const said = { suspended: 'suspended: every request answered 503', read_only: 'read-only: writes answered 503', active: 'active again' } as const;
    this.deps.events.normal(
      resource,
      wanted === 'active' ? 'Resumed' : wanted === 'suspended' ? 'Suspended' : 'ReadOnly',
      'Configure',
      `Tenant ${tenant.name} is ${said[wanted]}`,
    );
  }

  /**
   * `spec.plan` as the tenant's config `plan` (none: the default plan). A name QUIRE_PLANS does not
   * define changes nothing: PlanReady=False says so until the spec or the plans are fixed.
   */
  private async ensurePlan(resource: TenantResource, tenant: Tenant, spec: TenantSpec): Promise<ConditionInput> {
    const { platform, events } = this.deps;
    const unknown = spec.plan === undefined ? undefined : planProblem(platform, spec.plan);
    if (unknown !== undefined) {
      const message = `spec.plan: ${unknown}. Tenant ${tenant.name} keeps ${describePlan(tenant.config.plan, platform.limitsOf(tenant).plan)}`;
      events.warning(resource, 'UnknownPlan', 'Configure', message);
      return { type: 'PlanReady', status: 'False', reason: 'UnknownPlan', message };
    }
    let current = tenant;
    if (tenant.config.plan !== spec.plan) {
      await updateTenantConfig(platform, tenant.name, { plan: spec.plan ?? null });
      current = platform.tenants.get(tenant.name) ?? tenant;
      events.normal(resource, 'PlanChanged', 'Configure', `Tenant ${tenant.name} is on ${describePlan(spec.plan, platform.limitsOf(current).plan)}`);
    }
    return { type: 'PlanReady', status: 'True', reason: 'PlanApplied', message: `On ${describePlan(spec.plan, platform.limitsOf(current).plan)}` };
  }

  // ---- the cluster ----

  /**
   * `spec.cluster` against where the tenant is (`status.cluster`): a tenant on another cluster is
   * moved there (moveTenant, in the background: reconciles go on meanwhile and report its step), and
   * a move to it left unfinished is resumed. Without `spec.cluster` the tenant stays where it is.
   */
  private async ensureCluster(resource: TenantResource, tenant: Tenant, spec: TenantSpec): Promise<ConditionInput> {
    const { moves, platform } = this.deps;
    const wanted = spec.cluster;
    const tracked = moves.get(tenant.name);
    // Running here: a move is never stopped halfway, whatever the spec says now.
    if (tracked?.running) return moveCondition(tenant.name, tracked, wanted);
    if (wanted === undefined) {
      moves.forget(tenant.name);
      return { type: 'ClusterReady', status: 'True', reason: 'OnCluster', message: `On cluster ${tenant.cluster}` };
    }
    const unfinished = await unfinishedMove(platform, tenant.name);
    if (unfinished && unfinished.target !== wanted) return this.otherMoveUnfinished(resource, tenant, unfinished, wanted);
    if (!unfinished && wanted === tenant.cluster) {
      moves.forget(tenant.name);
      return { type: 'ClusterReady', status: 'True', reason: 'OnCluster', message: `On cluster ${tenant.cluster}, as spec.cluster asks` };
    }
    // A move under way goes on to its target even if that is draining now; a new one needs a target that takes tenants.
    const problem = unfinished ? undefined : await this.clusterProblem(wanted);
    if (problem) {
      moves.forget(tenant.name);
      const message = `${problem.message}. Tenant ${tenant.name} stays on cluster ${tenant.cluster}`;
      this.deps.events.warning(resource, problem.reason, 'Move', message);
      return { type: 'ClusterReady', status: 'False', reason: problem.reason, message };
    }
    return this.move(resource, tenant.name, unfinished?.source ?? tenant.cluster, wanted);
  }

  /** Starts (or resumes) the move unless a failed attempt, or another process holding it, is waited out first. */
  private move(resource: TenantResource, tenant: string, from: string, to: string): ConditionInput {
    const { moves } = this.deps;
    const tracked = moves.get(tenant);
    const wait = tracked?.to === to ? moves.waitMs(tenant) : 0;
    if (tracked && wait > 0) {
      // Requeued here too: a sooner requeue of the key (a 409's) replaces the one the failure scheduled.
      this.deps.requeue(resource, wait);
      return moveCondition(tenant, tracked, to);
    }
    return moveCondition(tenant, moves.start(resource, tenant, from, to), to);
  }

  /** A move to another cluster is recorded unfinished (`quire tenant move` cut short?): it must be finished first. */
  private otherMoveUnfinished(resource: TenantResource, tenant: Tenant, unfinished: UnfinishedMove, wanted: string): ConditionInput {
    this.deps.moves.forget(tenant.name);
    const condition = unfinishedMoveCondition(tenant.name, unfinished, wanted);
    this.deps.events.warning(resource, condition.reason, 'Move', condition.message);
    // Looked at again: whoever runs that move may finish it meanwhile.
    this.deps.requeue(resource, MOVE_RECHECK_MS);
    return condition;
  }

  /**
   * Why a new tenant cannot be created on cluster `name`: not registered (the registry is read again
   * first: the cluster may have been added since), or draining. Undefined when it can.
   */
  private async clusterProblem(name: string): Promise<{ reason: 'UnknownCluster' | 'ClusterDraining'; message: string } | undefined> {
    if (name === DEFAULT_CLUSTER) return this.drainingProblem(name);
    const { clusters } = this.deps.platform;
    if (clusters.get(name) === undefined) await clusters.refresh();
    if (clusters.get(name) === undefined) {
      const known = [
        DEFAULT_CLUSTER,
        ...clusters
          .list()
          .map((c) => c.name)
          .filter((c) => c !== DEFAULT_CLUSTER)
          .sort(),
      ];
      return { reason: 'UnknownCluster', message: `spec.cluster: no cluster named "${name}": the clusters are ${known.join(', ')} (quire cluster list)` };
    }
    return this.drainingProblem(name);
  }

  private drainingProblem(name: string): { reason: 'ClusterDraining'; message: string } | undefined {
    if (this.deps.platform.clusters.get(name)?.state !== 'draining') return undefined;
    return { reason: 'ClusterDraining', message: `spec.cluster: cluster ${name} is draining: no new tenant goes there (quire cluster undrain ${name})` };
  }

  /** A tenant not created because of its cluster: SchemaReady and ClusterReady False with the same reason, and a Warning. */
  private notPlaced(resource: TenantResource, name: string, problem: { reason: string; message: string }): SchemaState {
    const message = `${problem.message}. Tenant ${name} is not created`;
    this.deps.events.warning(resource, problem.reason, 'Place', message);
    return { ...failed(problem.reason, message), cluster: { type: 'ClusterReady', status: 'False', reason: problem.reason, message } };
  }

  private async ensureDomains(resource: TenantResource, tenant: Tenant, spec: TenantSpec): Promise<ConditionInput> {
    const { platform, events } = this.deps;
    let problem: ConditionInput | undefined;
    try {
      const wanted = customDomains(platform, spec.domains);
      if (!sameSet(tenant.domains, wanted)) {
        await setTenantDomains(platform, tenant.name, wanted);
        events.normal(resource, 'DomainsUpdated', 'Configure', `Custom domains: ${wanted.join(', ') || '(none)'}`);
      }
    } catch (err) {
      if (err instanceof DuplicateEntryError) problem = { type: 'DomainsReady', status: 'False', reason: 'DomainConflict', message: (err as Error).message };
      else if (err instanceof ValidationError) problem = { type: 'DomainsReady', status: 'False', reason: 'InvalidDomain', message: (err as Error).message };
      else throw err;
      events.warning(resource, problem.reason, 'Configure', problem.message);
    }
    // The Ingress serves what is registered, whatever the outcome above.
    const registered = platform.tenants.get(tenant.name)?.domains ?? tenant.domains;
    const ingressName = await this.ensureIngress(resource, tenant.name, registered);
    if (problem) return problem;
    const message = registered.length ? `${registered.length} custom domain(s) registered and routed by Ingress ${ingressName ?? ''}` : 'No custom domains';
    return { type: 'DomainsReady', status: 'True', reason: 'DomainsRegistered', message };
  }

  private async ensureIngress(resource: TenantResource, tenant: string, domains: readonly string[]): Promise<string | undefined> {
    const { api, ingresses, events } = this.deps;
    const name = ingressNameOf(tenant);
    const current = ingresses.problem === undefined ? ingresses.get(name, api.namespace) : undefined;
    if (domains.length === 0) {
      if ((current || ingresses.problem !== undefined) && (await api.deleteIngress(name))) {
        events.normal(resource, 'IngressDeleted', 'Route', `Deleted Ingress ${name}: no custom domains`);
      }
      return undefined;
    }
    const desired = desiredIngress(tenant, domains, ownerOf(resource), this.deps.ingress);
    if (!ingressUpToDate(current, desired)) {
      await api.applyIngress(desired);
      events.normal(resource, 'IngressApplied', 'Route', `Ingress ${name} routes ${domains.join(', ')}`);
    }
    return name;
  }

  // ---- status ----

  /** The status as reconciled: `parts` are the conditions besides SchemaReady that Ready follows; written only when it changed. */
  private async writeStatus(resource: TenantResource, schema: SchemaState, parts: readonly ConditionInput[], usage?: TenantUsageStatus): Promise<void> {
    const { platform, api } = this.deps;
    const generation = resource.metadata?.generation;
    const current = resource.status ?? {};
    const all = [schema.condition, ...parts];
    const next: TenantStatus = {
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      ...(schema.tenant ? { schema: schema.tenant.schema, cluster: schema.tenant.cluster, hosts: platform.tenants.hostsOf(schema.tenant) } : {}),
      ...(schema.adminSecretName ? { adminSecretName: schema.adminSecretName } : {}),
      conditions: withConditions(current.conditions, [readyCondition(all), ...all], generation, new Date()),
      ...(usage ? { usage } : {}),
    };
    if (!statusChanged(current, next)) return;
    await api.patchTenantStatus(resource.metadata?.name ?? '', next);
    const was = current.conditions?.find((c) => c.type === 'Ready');
    const now = next.conditions?.find((c) => c.type === 'Ready');
    if (now?.status === 'True' && was?.status !== 'True') this.deps.events.normal(resource, 'Ready', 'Reconcile', `Serving ${next.hosts?.join(', ') ?? ''}`);
  }
}

function nameProblem(name: string): string | undefined {
  try {
    return tenantName(name) === name ? undefined : `metadata.name ${name} is not a tenant name`;
  } catch (err) {
    return (err as Error).message;
  }
}

function failed(reason: string, message: string): SchemaState {
  return { condition: { type: 'SchemaReady', status: 'False', reason, message } };
}

/**
 * DomainsReady, PlanReady and ClusterReady while there is no tenant to register domains with, give a
 * plan or place: `cluster` when its cluster is why there is none.
 */
function waitingForTenant(cluster?: ConditionInput): ConditionInput[] {
  const waiting = (type: ConditionType): ConditionInput => ({ type, status: 'Unknown', reason: 'SchemaNotReady', message: 'Waits for the tenant' });
  return [waiting('DomainsReady'), waiting('PlanReady'), cluster ?? waiting('ClusterReady')];
}

/** Why `name` is not one of QUIRE_PLANS' plans; undefined when it is. */
function planProblem(platform: Platform, name: string): string | undefined {
  try {
    platform.plans.check(name);
    return undefined;
  } catch (err) {
    if (err instanceof ValidationError) return err.message;
    throw err;
  }
}

/** A tenant's plan in words: `own` (its config `plan`) when set, else the default, else none. */
function describePlan(own: string | undefined, effective: string | undefined): string {
  if (own !== undefined && own === effective) return `plan ${own}`;
  if (effective === undefined) return 'no plan (QUIRE_PLANS defines none: nothing is limited)';
  return `the default plan, ${effective}`;
}

/** What the resource's status records of the tenant's origin (a status lost with a failed write is rediscovered). */
function originOf(resource: TenantResource): Origin | undefined {
  const reason = resource.status?.conditions?.find((c: Condition) => c.type === 'SchemaReady' && c.status === 'True')?.reason;
  return reason === 'Created' || reason === 'Adopted' ? reason : undefined;
}

function ownerOf(resource: TenantResource): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: resource.metadata?.name ?? '',
    uid: resource.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

function describeError(err: unknown): string {
  return err instanceof Error && !('code' in err && typeof err.code === 'number') ? err.message : describe(err);
}
