import { readSecretHash } from '@quire/auth';
import { qualified, type Database } from '@quire/db';
import type { TenantMeta } from '@quire/meta';
import { consumeModel, destroyModel, findModel, findModelByUid, findModelByUserCode, revokeGrantModels, SIGNING_ALG, upsertModel } from '@quire/oauth';
import type { Platform, Tenant } from '@quire/tenancy';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { apiScopesFor } from './scopes';

/**
 * oidc-provider's storage for one tenant: every model in the tenant's `__OIDC` table, except
 * clients, which are the tenant's OAuth Client documents (their secret is a hash; see
 * provider.ts for how it is compared). Everything the auth service reads or writes in a tenant's
 * schema goes through its store's `db()`.
 */
export interface TenantStore {
  /**
   * The database holding the tenant's schema: its cluster's (platform.dbOf), asked at each use, as a
   * provider outlives a pool (a cluster's is closed while idle and opened again) and the tenant may
   * be moved to another cluster.
   */
  db: () => Database;
  schema: string;
  /** The tenant's metadata (cached by the platform; reloaded after a change). */
  meta: () => Promise<TenantMeta>;
}

export function tenantStore(platform: Platform, tenant: Tenant): TenantStore {
  return { db: () => platform.dbOf(tenant), schema: tenant.schema, meta: () => platform.metas.get(tenant) };
}

export interface ClientRow {
  name: string;
  client_type: string;
  grant_type: string;
  scopes: string | null;
  redirect_uris: string | null;
  user: string | null;
  app_name: string | null;
  skip_authorization: number;
}

/** An OAuth Client document's row (its secret is not in it: that is a hash in __Auth). */
export async function readClient(store: TenantStore, id: string): Promise<ClientRow | undefined> {
  const { rows } = await store.db().query<ClientRow>(
    `SELECT "name", "client_type", "grant_type", "scopes", "redirect_uris", "user", "app_name", "skip_authorization"
       FROM ${qualified(store.schema, 'tabOAuth Client')} WHERE "name" = $1`,
    [id],
  );
  return rows[0];
}

/** The roles a client admits (`allowed_roles`); none listed means Frappe's default, Desk User. */
export async function clientRoles(store: TenantStore, id: string): Promise<string[]> {
  const sql = `SELECT "role" FROM ${qualified(store.schema, 'tabOAuth Client Role')} WHERE "parent" = $1 AND "parenttype" = 'OAuth Client'`;
  const { rows } = await store.db().query<{ role: string }>(sql, [id]);
  return rows.length ? rows.map((r) => r.role) : ['Desk User'];
}

/** The scopes a client's document lists. */
export function configuredScopes(row: ClientRow): string[] {
  return (row.scopes ?? '').split(/\s+/).filter(Boolean);
}

/**
 * An OAuth Client document as oidc-provider client metadata. `quire_scopes` are the API scopes it
 * may be granted (its configured ones and, with `all`, any DocType's), which the resource server
 * info hands out; identity scopes are open to every code-flow client. ID tokens are ES256-signed,
 * the only kind of key a tenant has.
 */
export async function clientMetadata(store: TenantStore, id: string): Promise<AdapterPayload | undefined> {
  const row = await readClient(store, id);
  if (!row) return undefined;
  const codeFlow = row.grant_type === 'Authorization Code';
  let authentication: AdapterPayload = { token_endpoint_auth_method: 'none' };
  if (row.client_type !== 'Public') {
    const secretHash = await readSecretHash(store.db(), store.schema, 'OAuth Client', row.name, 'client_secret');
    if (!secretHash) return undefined;
    authentication = { client_secret: secretHash, token_endpoint_auth_method: 'client_secret_basic' };
  }
  return {
    client_id: row.name,
    client_name: row.app_name ?? row.name,
    ...authentication,
    grant_types: codeFlow ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
    response_types: codeFlow ? ['code'] : [],
    redirect_uris: codeFlow ? (row.redirect_uris ?? '').split(/\s+/).filter(Boolean) : [],
    quire_scopes: apiScopesFor(configuredScopes(row), await store.meta()).join(' '),
    id_token_signed_response_alg: SIGNING_ALG,
    ...(row.user ? { quire_user: row.user } : {}),
  };
}

export function adapterFor(store: TenantStore): new (model: string) => Adapter {
  return class TenantAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await upsertModel(store.db(), store.schema, this.model, id, payload, expiresIn || undefined);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return clientMetadata(store, id);
      const found = await findModel(store.db(), store.schema, this.model, id);
      if (!found) return undefined;
      return { ...found.payload, ...(found.consumed ? { consumed: true } : {}) };
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const found = await findModelByUserCode(store.db(), store.schema, this.model, userCode);
      return found ? { ...found.payload, ...(found.consumed ? { consumed: true } : {}) } : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const found = await findModelByUid(store.db(), store.schema, this.model, uid);
      return found ? { ...found.payload, ...(found.consumed ? { consumed: true } : {}) } : undefined;
    }

    async consume(id: string): Promise<void> {
      await consumeModel(store.db(), store.schema, this.model, id);
    }

    async destroy(id: string): Promise<void> {
      await destroyModel(store.db(), store.schema, this.model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await revokeGrantModels(store.db(), store.schema, grantId);
    }
  };
}
