export { startOperatorService, type OperatorService } from './service';
export { loadOperatorConfig, type OperatorConfig } from './config';
export { TenantController } from './controller';
export {
  GROUP,
  VERSION,
  PLURAL,
  KIND,
  API_VERSION,
  FINALIZER,
  type TenantResource,
  type TenantStatus,
  type TenantUsageStatus,
  type Condition,
} from './tenant-resource';
export { adminSecretNameOf } from './reconcile/admin-secret';
export { ingressNameOf } from './reconcile/ingress';
