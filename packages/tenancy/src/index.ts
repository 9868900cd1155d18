export { Platform, type PlatformOptions, type PublicUrl, type MeteringOptions } from './platform';
export { TenantPlans, type TenantLimits } from './plans';
export { PlanQuota, formatBytes } from './quota';
export { UsageMeter, UsageSampler, measureTenants, readUsage, type TenantUsage, type TenantMeasure, type UsageObserver } from './usage';
export { TenantDirectory, normalizeHost, isHostHeader, type TenantStatus, type Tenant, type TenantConfig, type DirectoryOptions } from './directory';
export {
  createTenant,
  dropTenant,
  setTenantStatus,
  updateTenantConfig,
  setTenantDomains,
  tenantName,
  customDomains,
  publicOrigin,
  type TenantConfigPatch,
  schemaOf,
  TENANT_NAME_RE,
  type CreateTenantInput,
  type CreatedTenant,
} from './provision';
export { installTenant, migrateTenant, setPassword, definitionHash, type InstallServices } from './install';
export { PLATFORM_SCHEMA, platformMigrations } from './platform-schema';
export { tenantMigrations, migrateTenantSchema } from './tenant-schema';
export { PlatformChanges, type WebhookEventsListener, type RealtimeListener } from './changes';
export { loadSecretBox } from './secrets';
export { loadDeploymentId } from './deployment';
export { releaseOf, releaseStatus, platformSchemaReady, recordTenantRelease, type ReleaseStatus } from './release';
export {
  migrateRelease,
  TenantMigrationError,
  MIGRATE_LOCK,
  type MigrateReleaseOptions,
  type MigrationReport,
  type MigrationFailure,
  type MigrationTarget,
  type TenantMigrationOutcome,
  type TenantMigrationStatus,
} from './migrate';
export { templateSchemaOf, type TemplatePlan } from './template';
export {
  Clusters,
  DEFAULT_CLUSTER,
  placeTenant,
  migrateClusterSchema,
  type ClusterConnection,
  type ClusterRecord,
  type ClusterState,
  type OpenCluster,
} from './clusters';
export { addCluster, listClusters, setClusterState, setClusterWeight, type AddClusterInput, type ClusterSummary } from './cluster-admin';
export { moveTenant, isMovedWrite, type MoveInput, type MoveProgress, type MoveReport, type MoveStep } from './move';
export { backupTenant, type BackupInput, type BackupProgress, type BackupReport } from './backup';
export { restoreTenant, type RestoreInput, type RestoreProgress, type RestoreReport } from './restore';
