import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { ServiceOperations } from '@quire/http';
import type { Platform } from '@quire/tenancy';
import type { Logger } from 'pino';
import type { OperatorConfig } from './config';
import { TenantController } from './controller';
import { ClusterApi } from './kube/cluster';
import { processIdentity } from './kube/leader-election';
import { OperatorMetrics } from './metrics';

const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface OperatorService {
  readonly controller: TenantController;
  readonly namespace: string;
  /** Who this process is in the leader Lease and as the Events' reporting instance. */
  readonly identity: string;
  /**
   * Stops reconciling (in-flight reconciles finish within `timeoutMs`), releases the Lease, stops
   * watching. Moves running here are never waited for past `timeoutMs`: one cut short is resumable,
   * and the next leader resumes it.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** The API server from KUBECONFIG, ~/.kube/config or the pod's service account, as kubectl finds it. */
function loadKubeConfig(config: OperatorConfig): KubeConfig {
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  return kc;
}

/** OPERATOR_NAMESPACE, else the pod's namespace, else the kubeconfig context's, else `default`. */
function namespaceOf(config: OperatorConfig, kc: KubeConfig): string {
  if (config.namespace) return config.namespace;
  try {
    return readFileSync(POD_NAMESPACE_FILE, 'utf8').trim();
  } catch {
    return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  }
}

/**
 * `quire serve operator`: reconciles the Tenant resources of one namespace into tenants, Ingresses
 * and credentials Secrets. Every replica watches; only the Lease holder reconciles. `/readyz` fails
 * until the informers have listed, and while a watch keeps failing.
 */
export async function startOperatorService(platform: Platform, config: OperatorConfig, logger: Logger, ops: ServiceOperations): Promise<OperatorService> {
  const kc = loadKubeConfig(config);
  const namespace = namespaceOf(config, kc);
  const identity = config.identity ?? processIdentity();
  const api = new ClusterApi(kc, namespace);
  const controller = new TenantController({
    platform,
    api,
    config,
    identity,
    metrics: (queue) => new OperatorMetrics(ops.metrics.registry, () => queue.depth),
    logger,
  });
  ops.readiness.add('kubernetes', () => Promise.resolve(controller.problem));
  await controller.start();
  logger.info({ namespace, identity, server: kc.getCurrentCluster()?.server }, 'watching Tenants');
  return {
    controller,
    namespace,
    identity,
    async close(timeoutMs = 20_000) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([controller.stop(), deadline]);
      clearTimeout(timer);
    },
  };
}
