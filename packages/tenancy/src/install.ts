import { indexDeclaredSchedules, syncScheduledJobTypes, syncSchedules } from '@quire/jobs';
import { createHash } from 'node:crypto';
import type { LoadedApps } from '@quire/apps';
import { hashPassword, storeSecretHash, type SecretBox } from '@quire/auth';
import { ident, qualified, type Executor, type Transaction } from '@quire/db';
import { insertDoc, updateDoc, type ChangeNotifier, type DocContext, type DocData, type FileStore } from '@quire/documents';
import { buildTenantMeta, checkFieldValue, createTableStatements, loadDefinitions, type DocTypeDefinition, type TenantRef } from '@quire/meta';
import { createSigningKey, publicKeys } from '@quire/oauth';
import { ADMINISTRATOR, GUEST, makePrincipal } from '@quire/permissions';
import { migrateTenantSchema } from './tenant-schema';

/**
 * Installing and migrating a tenant's schema: system tables, then every standard DocType of the
 * loaded apps inserted as a DocType document (its controller creates the table), then the
 * records every site has (modules, roles, Administrator and Guest).
 */

const ADMIN_PRINCIPAL = makePrincipal(ADMINISTRATOR, ['System Manager']);

/** A stable fingerprint of a standard definition, stored to skip unchanged DocTypes on migrate. */
export function definitionHash(def: DocTypeDefinition): string {
  return createHash('sha256').update(JSON.stringify(def)).digest('hex').slice(0, 32);
}

function asInput(def: DocTypeDefinition): DocData {
  return { ...def, custom: 0, migration_hash: definitionHash(def) };
}

const STANDARD_ROLES: Array<{ role_name: string; desk_access: number }> = [
  { role_name: 'Administrator', desk_access: 1 },
  { role_name: 'System Manager', desk_access: 1 },
  { role_name: 'Guest', desk_access: 0 },
  { role_name: 'All', desk_access: 0 },
  { role_name: 'Desk User', desk_access: 1 },
];

/** What installing needs of the platform: its caches' notifier and its file store. */
export interface InstallServices {
  changes: ChangeNotifier;
  files: FileStore;
  secrets: SecretBox;
  /** Serialize concurrent migrations of one tenant on an advisory lock (Postgres only). */
  lockMigrations?: boolean;
}

function installContext(db: Executor, tenant: TenantRef, apps: LoadedApps, definitions: DocTypeDefinition[], services: InstallServices): DocContext {
  const { changes, files, secrets } = services;
  return {
    db,
    tenant,
    meta: buildTenantMeta(tenant.schema, definitions, apps.ownerFields),
    principal: ADMIN_PRINCIPAL,
    controllers: apps.controllers,
    changes,
    files,
    secrets,
  };
}

export interface InstallOptions {
  adminPassword?: string | undefined;
  /** The Administrator's email (Frappe's default otherwise). */
  adminEmail?: string | undefined;
}

/**
 * Creates everything a new tenant's schema holds, in one transaction (or the caller's): the long
 * way, every standard DocType through the document lifecycle. `createTenant` copies a template
 * made this way instead (template.ts).
 */
export function installTenant(db: Executor, tenant: TenantRef, apps: LoadedApps, services: InstallServices, options: InstallOptions = {}): Promise<void> {
  return db.transaction(async (tx) => {
    await installStandard(tx, tenant, apps, services);
    await personalizeTenant(tx, tenant, apps, services, options);
  });
}

/** What every tenant of a release holds alike: the schema, its tables, the standard DocTypes and records. */
export async function installStandard(tx: Transaction, tenant: TenantRef, apps: LoadedApps, services: InstallServices): Promise<void> {
  await tx.query(`CREATE SCHEMA ${ident(tenant.schema)}`);
  await migrateTenantSchema(tx, tenant.schema, false);
  const ctx = installContext(tx, tenant, apps, apps.doctypes, services);
  // The tables that hold DocTypes must exist before the first DocType document is stored.
  for (const name of ['DocType', 'DocField', 'DocPerm']) {
    for (const sql of createTableStatements(ctx.meta.require(name))) await tx.query(sql);
  }
  for (const def of apps.doctypes) await insertDoc(ctx, 'DocType', asInput(def), { installing: true });
  await installRecords(ctx, apps);
  await syncScheduledJobTypes(ctx, apps.schedulerEvents);
}

/** What is a tenant's own: the Administrator's email and password, and its OAuth signing key. */
export async function personalizeTenant(
  tx: Transaction,
  tenant: TenantRef,
  apps: LoadedApps,
  services: InstallServices,
  options: InstallOptions,
): Promise<void> {
  const email = options.adminEmail === undefined ? DEFAULT_ADMIN_EMAIL : adminEmail(apps, options.adminEmail);
  if (email !== DEFAULT_ADMIN_EMAIL) {
    await tx.query(`UPDATE ${qualified(tenant.schema, 'tabUser')} SET "email" = $1 WHERE "name" = $2`, [email, ADMINISTRATOR]);
  }
  if (options.adminPassword) await setPassword({ db: tx, tenant }, ADMINISTRATOR, options.adminPassword);
  await createSigningKey(tx, tenant.schema, services.secrets);
  // A template's copy holds the Scheduled Job Types as the hooks declare them, but not their index rows (on the cluster, not in the schema).
  await indexDeclaredSchedules(tx, tenant.name, apps.schedulerEvents);
}

/** Brings an existing tenant's schema, standard DocTypes and records up to the loaded apps'. Returns the migrations applied and the DocTypes changed. */
export function migrateTenant(db: Executor, tenant: TenantRef, apps: LoadedApps, services: InstallServices): Promise<string[]> {
  return db.transaction((tx) => migrate(tx, tenant, apps, services));
}

async function migrate(tx: Transaction, tenant: TenantRef, apps: LoadedApps, services: InstallServices): Promise<string[]> {
  // Concurrent `quire migrate` runs take turns per tenant (the embedded database has one session anyway).
  const applied = await migrateTenantSchema(tx, tenant.schema, services.lockMigrations ?? false);
  const current = await loadDefinitions(tx, tenant.schema);
  const stored = new Map(
    (
      await tx.query<{ name: string; migration_hash: string | null }>(`SELECT "name", "migration_hash" FROM ${qualified(tenant.schema, 'tabDocType')}`)
    ).rows.map((r) => [r.name, r.migration_hash]),
  );
  const standard = new Map(apps.doctypes.map((d) => [d.name, d]));
  const target = [...current.filter((d) => !standard.has(d.name)), ...apps.doctypes];
  const ctx = installContext(tx, tenant, apps, target, services);
  const changed: string[] = [...applied];
  for (const def of apps.doctypes) {
    if (!stored.has(def.name)) {
      await insertDoc(ctx, 'DocType', asInput(def), { installing: true });
      changed.push(def.name);
    } else if (stored.get(def.name) !== definitionHash(def)) {
      await updateDoc(ctx, 'DocType', def.name, asInput(def), { installing: true });
      changed.push(def.name);
    }
  }
  await installRecords(ctx, apps);
  await syncSchedules(ctx, apps.schedulerEvents);
  if ((await publicKeys(tx, tenant.schema)).length === 0) await createSigningKey(tx, tenant.schema, services.secrets);
  return changed;
}

/** Inserts the records of `doctype` that do not exist yet (one query to find which: `quire migrate` runs this for every tenant). */
async function ensure(ctx: DocContext, doctype: string, records: ReadonlyArray<{ name: string; input: DocData }>): Promise<void> {
  const { rows } = await ctx.db.query<{ name: string }>(`SELECT "name" FROM ${ctx.meta.require(doctype).table} WHERE "name" = ANY($1::text[])`, [
    records.map((r) => r.name),
  ]);
  const present = new Set(rows.map((r) => r.name));
  for (const r of records) if (!present.has(r.name)) await insertDoc(ctx, doctype, r.input, { installing: true, name: r.name });
}

/** Frappe's default for the Administrator's email; `createTenant --admin-email` sets another. */
const DEFAULT_ADMIN_EMAIL = 'admin@example.com';

/** The email as the User controller would store it (trimmed, lower case), checked as User's email field checks it. */
function adminEmail(apps: LoadedApps, input: string): string {
  const email = input.trim().toLowerCase();
  const field = apps.doctypes.find((d) => d.name === 'User')?.fields.find((f) => f.fieldname === 'email');
  if (field) checkFieldValue(field, email, 'User');
  return email;
}

async function installRecords(ctx: DocContext, apps: LoadedApps): Promise<void> {
  await ensure(
    ctx,
    'Module Def',
    apps.modules.map(({ app, module }) => ({ name: module, input: { module_name: module, app_name: app, custom: module === 'Custom' ? 1 : 0 } })),
  );
  await ensure(
    ctx,
    'Role',
    STANDARD_ROLES.map((role) => ({ name: role.role_name, input: role })),
  );
  await ensure(ctx, 'User', [
    {
      name: ADMINISTRATOR,
      input: {
        email: DEFAULT_ADMIN_EMAIL,
        first_name: 'Administrator',
        user_type: 'System User',
        roles: [{ role: 'Administrator' }, { role: 'System Manager' }],
      },
    },
    { name: GUEST, input: { email: 'guest@example.com', first_name: 'Guest', user_type: 'Website User', roles: [{ role: 'Guest' }] } },
  ]);
}

/** Stores a login password (hashed; the User document never holds it). */
export async function setPassword(ctx: Pick<DocContext, 'db' | 'tenant'>, user: string, password: string): Promise<void> {
  await storeSecretHash(ctx.db, ctx.tenant.schema, 'User', user, 'password', await hashPassword(password));
}
